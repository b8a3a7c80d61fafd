// Proves the test and quick-start infrastructure against the real system:
// scripts/secret-session starts a working gnome-keyring on a private bus and
// cleans up after itself, and TestUser/UserSession run commands as a real
// throwaway account in its own Secret Service. It delegates to dbus-run-session,
// gnome-keyring-daemon, secret-tool, useradd and runuser.
import Foundation
import KeygateTestSupport
import XCTest

final class SecretSessionTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself
    private var secretSession: String { PackagePaths.scripts + "/secret-session" }

    private func requireTools() throws {
        for tool in ["dbus-run-session", "gnome-keyring-daemon", "secret-tool"] {
            let found = (try? Subprocess.run(["sh", "-c", "command -v \(tool)"]))?.status == 0
            try Requirement.require(found, "\(tool) (apt-get install dbus gnome-keyring libsecret-tools)")
        }
    }

    private func randomValue() -> String { "v-" + UUID().uuidString }

    /// The pid in dbus-send's literal reply ("   uint32 1234").
    private func daemonPID(in reply: String) -> Int32? {
        reply.split(whereSeparator: { $0 == " " || $0 == "\n" }).last.flatMap { Int32($0) }
    }

    /// Whether a process runs: gone, or exited and not yet reaped (state Z), counts as not running.
    private func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        let state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init) ?? ""
        return state != "Z"
    }

    func test_secretSession_roundTripsASecret_throughGnomeKeyring() throws {
        try requireTools()
        let value = randomValue()
        let result = try Subprocess.run(
            [secretSession, "--ephemeral", "sh", "-c",
             "secret-tool store --label=kgt kgtest roundtrip && secret-tool lookup kgtest roundtrip"],
            stdin: Data(value.utf8), timeout: 60)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.out, value)
    }

    func test_secretSession_ephemeral_startsEachSessionWithAnEmptyKeyring() throws {
        try requireTools()
        let store = try Subprocess.run(
            [secretSession, "--ephemeral", "secret-tool", "store", "--label=kgt", "kgtest", "ephemeral"],
            stdin: Data(randomValue().utf8), timeout: 60)
        XCTAssertEqual(store.status, 0, store.err)
        let lookup = try Subprocess.run(
            [secretSession, "--ephemeral", "secret-tool", "lookup", "kgtest", "ephemeral"], timeout: 60)
        XCTAssertEqual(lookup.status, 1, "a second ephemeral session must not see the first one's item")
        XCTAssertEqual(lookup.out, "")
    }

    func test_secretSession_exitsWithTheCommandsStatus() throws {
        try requireTools()
        let result = try Subprocess.run([secretSession, "--ephemeral", "sh", "-c", "exit 7"], timeout: 60)
        XCTAssertEqual(result.status, 7)
    }

    func test_secretSession_stopsTheDaemon_whenTheCommandExits() throws {
        try requireTools()
        let result = try Subprocess.run(
            [secretSession, "--ephemeral", "dbus-send", "--session", "--print-reply=literal",
             "--dest=org.freedesktop.DBus", "/", "org.freedesktop.DBus.GetConnectionUnixProcessID",
             "string:org.freedesktop.secrets"], timeout: 60)
        XCTAssertEqual(result.status, 0, result.err)
        let pid = try XCTUnwrap(daemonPID(in: result.out), "no daemon pid in \(result.out)")
        XCTAssertFalse(isRunning(pid), "gnome-keyring-daemon \(pid) is still running")
    }

    func test_secretSession_passesATerminateSignalOn_andStopsTheDaemon() throws {
        try requireTools()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: secretSession)
        process.arguments = ["--ephemeral", "sh", "-c", """
            dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / \\
              org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets
            exec sleep 60
            """]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var firstLine = Data()
        while !firstLine.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            firstLine.append(chunk)
        }
        let pid = try XCTUnwrap(daemonPID(in: String(decoding: firstLine, as: UTF8.self)))
        let started = Date()
        process.terminate()
        process.waitUntilExit()
        // Everything that held the output pipe (the command above all) is gone: the read ends.
        _ = output.fileHandleForReading.readDataToEndOfFile()
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the command outlived the session")
        XCTAssertEqual(process.terminationStatus, 143)
        XCTAssertFalse(isRunning(pid), "gnome-keyring-daemon \(pid) is still running")
    }

    func test_secretSession_keepsAnEncryptedKeyring_andRefusesAWrongPassword() throws {
        try requireTools()
        let home = try temporaryHome()
        let env = ["HOME": home, "PATH": "/usr/local/bin:/usr/bin:/bin", "SECRET_SESSION_PASSWORD_FD": "0"]
        let value = randomValue()

        // The password is the first line of fd 0; the rest of stdin is the command's.
        let store = try Subprocess.run(
            [secretSession, "secret-tool", "store", "--label=kgt", "kgtest", "encrypted"],
            stdin: Data("right-password\n\(value)".utf8), environment: env, timeout: 60)
        XCTAssertEqual(store.status, 0, store.err)
        let keyring = try Data(contentsOf: URL(fileURLWithPath: home + "/.local/share/keyrings/login.keyring"))
        XCTAssertTrue(keyring.starts(with: Data("GnomeKeyring\n".utf8)), "the keyring file is not encrypted")
        XCTAssertNil(keyring.range(of: Data(value.utf8)), "the secret is in the keyring file in clear")

        let wrong = try Subprocess.run([secretSession, "secret-tool", "lookup", "kgtest", "encrypted"],
                                       stdin: Data("wrong-password\n".utf8), environment: env, timeout: 60)
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.err.contains("stayed locked"), wrong.err)
        XCTAssertEqual(wrong.out, "")

        let right = try Subprocess.run([secretSession, "secret-tool", "lookup", "kgtest", "encrypted"],
                                       stdin: Data("right-password\n".utf8), environment: env, timeout: 60)
        XCTAssertEqual(right.status, 0, right.err)
        XCTAssertEqual(right.out, value)
    }

    /// A shell function, `owner`, that prints the pid of the process that owns
    /// org.freedesktop.secrets on the session bus, or nothing.
    private static let ownerFunction = """
        owner() { dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / \\
            org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null | awk '{ print $NF }'; }
        """

    /// A fresh HOME in the temporary folder, removed when the test ends.
    private func temporaryHome() throws -> String {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("kgt-home-" + UUID().uuidString).path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: home) }
        return home
    }

    // gnome-keyring 42 crashes now and then, and the bus starts it again. Under --ephemeral the
    // new daemon must serve the session's own keyrings, not HOME's (CI of stop 28: it served
    // HOME's, and printed its GNOME_KEYRING_CONTROL on the session's stdout).
    func test_secretSession_ephemeral_aDaemonTheBusStartsAgain_servesTheSameKeyrings() throws {
        try requireTools()
        let home = try temporaryHome()
        let value = randomValue()
        let result = try Subprocess.run([secretSession, "--ephemeral", "sh", "-c", """
            secret-tool store --label=kgt kgtest restarted || exit 3
            \(Self.ownerFunction)
            first=$(owner); kill -KILL "$first"
            while [ -n "$(owner)" ]; do sleep 0.05; done
            echo "value=$(secret-tool lookup kgtest restarted)"
            [ "$(owner)" != "$first" ] && echo restarted=yes
            """], stdin: Data(value.utf8),
            environment: ["HOME": home, "PATH": "/usr/local/bin:/usr/bin:/bin"], timeout: 60)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.out, "value=\(value)\nrestarted=yes\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: home + "/.local/share/keyrings"),
                       "the daemon the bus started again opened HOME's keyrings")
    }

    /// A folder with a `gnome-keyring-daemon` that starts the real one, then kills it once it owns
    /// org.freedesktop.secrets (a crash while starting), for the first `kills` starts.
    private func crashingDaemonFolder(kills: Int) throws -> String {
        let real = try Subprocess.run(["sh", "-c", "command -v gnome-keyring-daemon"]).out
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let folder = try temporaryHome()
        let shim = """
            #!/bin/sh
            out=$(\(real) "$@") || exit $?
            printf '%s\\n' "$out"
            n=$(cat \(folder)/starts 2>/dev/null || echo 0); echo $((n + 1)) > \(folder)/starts
            [ "$n" -lt \(kills) ] || exit 0
            \(Self.ownerFunction)
            i=0; while [ -z "$(owner)" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
            kill -KILL "$(owner)"
            while [ -n "$(owner)" ]; do sleep 0.05; done
            """
        try Data(shim.utf8).write(to: URL(fileURLWithPath: folder + "/gnome-keyring-daemon"))
        XCTAssertEqual(chmod(folder + "/gnome-keyring-daemon", 0o755), 0)
        return folder
    }

    func test_secretSession_startsGnomeKeyringAgain_withThePassword_whenItQuitsWhileStarting() throws {
        try requireTools()
        let home = try temporaryHome()
        let value = randomValue()
        var env = ["HOME": home, "PATH": "/usr/local/bin:/usr/bin:/bin", "SECRET_SESSION_PASSWORD_FD": "0"]
        let store = try Subprocess.run([secretSession, "secret-tool", "store", "--label=kgt", "kgtest", "crash"],
                                       stdin: Data("the-password\n\(value)".utf8), environment: env, timeout: 60)
        XCTAssertEqual(store.status, 0, store.err)

        // The keyring is encrypted: only a daemon given the password opens it.
        let crashing = try crashingDaemonFolder(kills: 1)
        env["PATH"] = crashing + ":" + env["PATH", default: ""]
        let lookup = try Subprocess.run([secretSession, "secret-tool", "lookup", "kgtest", "crash"],
                                        stdin: Data("the-password\n".utf8), environment: env, timeout: 60)
        XCTAssertEqual(lookup.status, 0, lookup.err)
        XCTAssertEqual(lookup.out, value)
        XCTAssertTrue(lookup.err.contains("gnome-keyring-daemon failed as it started (it quit before "
                                          + "org.freedesktop.secrets appeared on the session bus): starting it again"), lookup.err)
        XCTAssertEqual(try String(contentsOfFile: crashing + "/starts", encoding: .utf8), "2\n")
    }

    func test_secretSession_stopsClearly_whenGnomeKeyringQuitsAtEveryStart() throws {
        try requireTools()
        let crashing = try crashingDaemonFolder(kills: 10)
        let result = try Subprocess.run(
            [secretSession, "--ephemeral", "sh", "-c", "echo ran"],
            environment: ["HOME": NSTemporaryDirectory(), "PATH": crashing + ":/usr/local/bin:/usr/bin:/bin"], timeout: 90)
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.out, "", "the command ran without a Secret Service")
        // Its death is seen at once (its lifeline pipe closed), not after the 5 s a slow start is given.
        XCTAssertTrue(result.err.contains("gnome-keyring-daemon failed three times as it started (it quit before "
                                          + "org.freedesktop.secrets appeared on the session bus)"), result.err)
        XCTAssertEqual(try String(contentsOfFile: crashing + "/starts", encoding: .utf8), "3\n")
    }

    func test_secretSession_failsClearly_withoutHome() throws {
        try requireTools()
        let result = try Subprocess.run([secretSession, "true"], environment: ["PATH": "/usr/bin:/bin"], timeout: 60)
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.err.contains("HOME is not set"), result.err)
    }

    func test_userSession_runsTheScriptAsTheUser_inItsOwnSecretService() throws {
        try requireTools()
        try Requirement.require(Requirement.isRoot, "root (to create a test user)")
        let user = try TestUser.create()
        defer { user.remove() }
        XCTAssertNotEqual(user.uid, 0)

        let value = randomValue()
        let result = try UserSession.run(as: user, script: """
            set -e
            id -un
            echo "$HOME"
            tty_nr=$(awk '{ print $7 }' /proc/$$/stat); echo "tty=$tty_nr"
            command -v keygate
            if ldd "$(command -v keygate)" | grep "not found" >&2; then exit 3; fi
            secret-tool store --label=kgt kgtest user
            secret-tool lookup kgtest user
            """, stdin: Data(value.utf8))
        XCTAssertEqual(result.status, 0, result.err)
        let tools = try UserSession.stageTools()
        XCTAssertEqual(result.out, "\(user.name)\n\(user.home)\ntty=0\n\(tools)/keygate\n\(value)")

        // The item lives in the user's own keyring, which persists into the user's next session.
        let again = try UserSession.run(as: user, script: "secret-tool lookup kgtest user")
        XCTAssertEqual(again.out, value, again.err)
        let mine = try Subprocess.run([secretSession, "--ephemeral", "secret-tool", "lookup", "kgtest", "user"])
        XCTAssertEqual(mine.out, "", "root's session must not see the user's item")
    }

    func test_testUser_remove_deletesTheAccountAndItsHome() throws {
        try Requirement.require(Requirement.isRoot, "root (to create a test user)")
        let user = try TestUser.create()
        XCTAssertEqual(try Subprocess.run(["getent", "passwd", user.name]).status, 0)
        XCTAssertTrue(FileManager.default.fileExists(atPath: user.home))
        // A process of the user left running must not stop the removal.
        // (Started without pipes: a child that keeps Subprocess's output pipe open would hold it up.)
        let lingering = Process()
        lingering.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
        lingering.arguments = ["-u", user.name, "--", "sleep", "300"]
        lingering.standardInput = FileHandle.nullDevice
        lingering.standardOutput = FileHandle.nullDevice
        lingering.standardError = FileHandle.nullDevice
        try lingering.run()
        var running = false
        for _ in 0..<50 where !running {
            running = try Subprocess.run(["pgrep", "-U", String(user.uid), "-x", "sleep"]).status == 0
            if !running { usleep(100_000) }
        }
        XCTAssertTrue(running, "the user's process did not start")
        user.remove()
        lingering.waitUntilExit()
        XCTAssertEqual(try Subprocess.run(["getent", "passwd", user.name]).status, 2, "the account still exists")
        XCTAssertFalse(FileManager.default.fileExists(atPath: user.home), "the home folder is still there")
    }

    func test_testUser_changePassword_changesTheLoginPassword() throws {
        try Requirement.require(Requirement.isRoot, "root (to create a test user)")
        let found = (try? Subprocess.run(["sh", "-c", "command -v pamtester"]))?.status == 0
        try Requirement.require(found, "pamtester (apt-get install pamtester)")
        let user = try TestUser.create()
        defer { user.remove() }
        let old = user.password
        let new = "changed-" + UUID().uuidString
        try user.changePassword(to: new)
        XCTAssertEqual(user.password, new)
        // An unknown service name falls back to /etc/pam.d/other (common-auth: pam_unix).
        func authenticate(_ password: String) throws -> Int32 {
            try Subprocess.run(["pamtester", "kgt-no-such-service", user.name, "authenticate"],
                               stdin: Data("\(password)\n".utf8), timeout: 30).status
        }
        XCTAssertEqual(try authenticate(new), 0)
        XCTAssertNotEqual(try authenticate(old), 0)
    }
}
