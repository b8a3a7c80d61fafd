// The gatekeeper's daemon (docs/GATEKEEPER.md, "The daemon"): started by the setuid helper,
// root in full, answering reads inside their window on its socket, never more than the
// helper would, and never held up by a silent caller. Each test takes the helper away from
// the user's keygate (KEYGATE_TEST_GATEKEEPER names a stand-in that only counts its calls),
// so that an answer can only have come from the daemon. Real processes: the built keygate
// and keygate-gatekeeper (setuid root), real pam_unix, the test user's own sessions. Each
// CLIUserHarness.run is a session of its own; the tests that read across runs make the
// window global (KEYGATE_TEST_REUSE_SCOPE), the one about another session does not.
import Foundation
import KeygateTestSupport
import XCTest

final class GateDaemonTests: XCTestCase {
    /// A stand-in for the helper: counts each call in ~/helper-calls and fails.
    private func standIn(_ h: CLIUserHarness) throws -> [String: String] {
        try h.writeUserFile("stand-in", "#!/bin/sh\necho call >> \"$HOME/helper-calls\"\nexit 3\n", mode: 0o700)
        try h.writeUserFile("helper-calls", "", mode: 0o600)
        return ["KEYGATE_TEST_GATEKEEPER": h.user.home + "/stand-in"]
    }

    /// One window for every session of the test user (the reads below run in sessions of their own).
    private let global = ["KEYGATE_TEST_REUSE_SCOPE": "global"]

    /// Adds and reads one presence item through the helper, which leaves the daemon running.
    private func readOnceThroughTheHelper(_ h: CLIUserHarness, scope: [String: String]) throws {
        let r = try h.run("""
            printf %s s3cret | keygate add -s vault -a a --access user-presence; echo add=$?
            printf 'get=%s\\n' "$(keygate get -s vault -a a)"
            """, extraEnvironment: scope)
        XCTAssertEqual(r.values["get"], "s3cret", r.summary)
    }

    /// Reads vault/a with the stand-in as the helper, in `scope`: `status` is the read's exit
    /// status, `get` what it printed, `calls` how many times the helper was asked.
    private func readWithTheStandIn(_ h: CLIUserHarness, scope: [String: String], askpass: Bool = true) throws -> ProcessResult {
        try h.run("""
            v=$(keygate get -s vault -a a); echo status=$?
            printf 'get=%s\\n' "$v"
            echo calls=$(wc -l < "$HOME/helper-calls")
            """, askpass: askpass, extraEnvironment: try standIn(h).merging(scope) { a, _ in a })
    }

    /// The daemon refused the read: it failed, printed no secret, and the helper was asked instead.
    private func assertTheDaemonRefused(_ r: ProcessResult, _ why: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNotEqual(r.values["status"], "0", r.summary, file: file, line: line)
        XCTAssertFalse(r.out.contains("s3cret"), r.summary, file: file, line: line)
        XCTAssertEqual(r.values["calls"], "1", "\(why): \(r.summary)", file: file, line: line)
    }

    func test_aReadInsideTheWindow_isAnsweredByTheDaemon_whichIsRootInFull() throws {
        let h = try CLIUserHarness()
        try readOnceThroughTheHelper(h, scope: global)
        let daemon = try XCTUnwrap(GateDaemonProcess.find(confdir: h.confdir), "the helper started a daemon")
        let ids = daemon.ids
        XCTAssertEqual(ids.uid, ["0", "0", "0", "0"], "real, effective, saved and fs uid are root's: \(ids)")
        XCTAssertEqual(ids.gid, ["0", "0", "0", "0"], "and the gids: \(ids)")
        XCTAssertEqual(ids.groups, [], "no supplementary group of the user who started it: \(ids)")

        let r = try h.run("""
            printf 'get=%s\\n' "$(keygate get -s vault -a a)"
            echo calls=$(wc -l < "$HOME/helper-calls")
            kill -0 \(daemon.pid) 2>/dev/null; echo signal=$?
            kill -STOP \(daemon.pid) 2>/dev/null; echo stop=$?
            """, extraEnvironment: try standIn(h).merging(global) { a, _ in a })
        XCTAssertEqual(r.values["get"], "s3cret", "the daemon answered the read in its window: \(r.summary)")
        XCTAssertEqual(r.values["calls"], "0", "without the helper: \(r.summary)")
        XCTAssertEqual(r.values["signal"], "1", "the user cannot signal the daemon it started: \(r.summary)")
        XCTAssertEqual(r.values["stop"], "1", r.summary)

        // `keygate lock` ends the window in root's records; the daemon reads them, so it refuses,
        // and the read goes to the helper (here the stand-in, which fails).
        _ = try h.run("keygate lock", extraEnvironment: global)
        assertTheDaemonRefused(try readWithTheStandIn(h, scope: global), "after lock the daemon sends the read to the helper")
    }

    /// A read inside the window keeps the class public key beside the master key (public, and
    /// with the master key's timeout, never "perm"), and derives only the private half next
    /// time. A wrong one, written by another process of the user, opens nothing: the read
    /// still returns the secret, through the full derivation.
    func test_theKeptClassPublicKey_expires_andAWrongOneOpensNothing() throws {
        let h = try CLIUserHarness()
        try readOnceThroughTheHelper(h, scope: global)
        let r = try h.run(#"""
            keygate get -s vault -a a >/dev/null
            keyctl session - sh -c 'keyctl link @u @s >/dev/null; cat /proc/keys' | grep "keygate:" > "$HOME/keys"
            echo pub="$(awk '/:classpub\./ {print $4}' "$HOME/keys")" master="$(awk '/:master/ {print $4}' "$HOME/keys")"
            name=$(awk '/:classpub\./ {sub(/:$/, "", $9); print $9}' "$HOME/keys")
            # Another process of the user puts a wrong public key in its place (an 8-byte header, 32 bytes).
            keyctl session - sh -c "keyctl link @u @s >/dev/null; head -c 40 /dev/urandom | keyctl padd user '$name' @u >/dev/null" && echo replaced=yes
            printf 'get=%s\n' "$(keygate get -s vault -a a)"
            """#, extraEnvironment: try standIn(h).merging(global) { a, _ in a })
        let pub = r.values["pub"] ?? "", master = r.values["master"] ?? ""
        XCTAssertFalse(pub.isEmpty, "the read kept the class public key: \(r.summary)")
        XCTAssertNotEqual(pub, "perm", "it expires: \(r.summary)")
        XCTAssertNotEqual(master, "perm", r.summary)
        XCTAssertEqual(r.values["replaced"], "yes", r.summary)
        XCTAssertEqual(r.values["get"], "s3cret", "a wrong kept public key opens nothing, and the read still works: \(r.summary)")
    }

    func test_anotherSession_getsNothingFromTheDaemon() throws {
        let h = try CLIUserHarness()
        try readOnceThroughTheHelper(h, scope: [:])
        XCTAssertNotNil(GateDaemonProcess.find(confdir: h.confdir), "the helper started a daemon")
        // A process in another session of the same user, asking the daemon directly: its scope comes
        // from the kernel (the socket's peer), and it has no window.
        assertTheDaemonRefused(try readWithTheStandIn(h, scope: [:], askpass: false), "the daemon refused, so the helper was asked")
    }

    func test_anAdministratorsPolicyEdit_countsAtTheDaemonsNextAnswer() throws {
        let h = try CLIUserHarness()
        let root = try h.policyRoot(["10-vault.policy": "[service \"vault\"]\nreuse-duration = 300\n"], for: self)
        let scope = global.merging(["KEYGATE_TEST_POLICY_ROOT": root]) { a, _ in a }
        try readOnceThroughTheHelper(h, scope: scope)
        let inWindow = try readWithTheStandIn(h, scope: scope)
        XCTAssertEqual(inWindow.values["get"], "s3cret", inWindow.summary)
        XCTAssertEqual(inWindow.values["calls"], "0", inWindow.summary)
        // Root shortens the window in place (the same file, the same size: only its times change).
        try "[service \"vault\"]\nreuse-duration = 001\n".write(toFile: root + "/admin/10-vault.policy", atomically: false, encoding: .utf8)
        sleep(2)
        assertTheDaemonRefused(try readWithTheStandIn(h, scope: scope), "the daemon read the edited policy and sent the read to the helper")
    }

    func test_theDaemonMode_isRootsAlone() throws {
        let h = try CLIUserHarness()
        let helper = try UserSession.stageTools() + "/keygate-gatekeeper"
        let r = try h.run("\(helper) --serve; echo serve=$?")
        XCTAssertEqual(r.values["serve"], "2", r.summary)
        XCTAssertTrue(r.err.contains("runs as root only"), r.summary)
    }

    func test_aSilentCaller_doesNotHoldTheDaemon() throws {
        let h = try CLIUserHarness()
        try readOnceThroughTheHelper(h, scope: global)
        let daemon = try XCTUnwrap(GateDaemonProcess.find(confdir: h.confdir), "the helper started a daemon")
        let socket = try XCTUnwrap(daemon.socketPath, "the daemon's listening socket")
        // Three callers that connect and say nothing, then the user's read.
        let r = try h.run("""
            for i in 1 2 3; do
                python3 -c 'import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(8)' '\(socket)' &
            done
            sleep 0.3
            printf 'get=%s\\n' "$(keygate get -s vault -a a)"
            echo calls=$(wc -l < "$HOME/helper-calls")
            kill %1 %2 %3 2>/dev/null
            """, extraEnvironment: try standIn(h).merging(global) { a, _ in a })
        XCTAssertEqual(r.values["get"], "s3cret", "the daemon cut the silent callers off and answered: \(r.summary)")
        XCTAssertEqual(r.values["calls"], "0", r.summary)
    }

    func test_aReplacedBinary_endsTheDaemon() throws {
        let h = try CLIUserHarness()
        try readOnceThroughTheHelper(h, scope: global)
        let daemon = try XCTUnwrap(GateDaemonProcess.find(confdir: h.confdir), "the helper started a daemon")
        // An upgrade replaces the file: the daemon ends within about a second, with no call.
        let helper = try UserSession.stageTools() + "/keygate-gatekeeper"
        let fresh = helper + ".new"
        _ = try Subprocess.run(["cp", "-p", helper, fresh])
        XCTAssertEqual(rename(fresh, helper), 0, String(cString: strerror(errno)))
        try BuiltGatekeeperStaging.restoreSetuid(helper)
        var gone = false
        for _ in 0..<50 where !gone {
            gone = kill(daemon.pid, 0) != 0
            if !gone { usleep(100_000) }
        }
        XCTAssertTrue(gone, "the daemon of the replaced binary ended without waiting for a call")
        // The next read goes to the new helper, which starts a daemon of the new binary.
        let r = try h.run("printf 'get=%s\\n' \"$(keygate get -s vault -a a)\"", extraEnvironment: global)
        XCTAssertEqual(r.values["get"], "s3cret", r.summary)
        let next = try XCTUnwrap(GateDaemonProcess.find(confdir: h.confdir), "the new helper started a daemon")
        XCTAssertNotEqual(next.pid, daemon.pid)
    }

    func test_socketActivation_servesAsTheSelfStartedDaemonDoes() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        try Requirement.require(FileManager.default.isExecutableFile(atPath: activate),
                                "systemd-socket-activate (package systemd) to start the daemon as systemd's socket unit does")
        let h = try CLIUserHarness()
        try readOnceThroughTheHelper(h, scope: global)
        let started = try XCTUnwrap(GateDaemonProcess.find(confdir: h.confdir), "the helper started a daemon")
        let socket = try XCTUnwrap(started.socketPath)
        let environment = started.environment
        // Replace the helper's daemon with one that systemd's protocol hands its socket to.
        XCTAssertEqual(kill(started.pid, SIGKILL), 0)
        usleep(200_000)
        unlink(socket)
        let helper = try UserSession.stageTools() + "/keygate-gatekeeper"
        // systemd-socket-activate hands its child only LISTEN_* and what -E names: the same test hooks.
        let hooks = environment.filter { $0.hasPrefix("KEYGATE_TEST_") }
        let arguments = ["/usr/bin/env", "-i", activate, "-l", socket] + hooks.flatMap { ["-E", $0] } + [helper, "--serve"]
        // posix_spawn, not Foundation's Process: this child outlives the calls Subprocess makes
        // meanwhile, and Foundation's child bookkeeping once lost one of those (a zombie chown).
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        XCTAssertEqual(posix_spawn(&pid, "/usr/bin/env", nil, nil, argv, environ), 0)
        // SIGKILL: the test process's blocked signals are inherited, so a SIGTERM could stay pending.
        defer { kill(pid, SIGKILL); var status: Int32 = 0; waitpid(pid, &status, 0) }
        for _ in 0..<50 where !FileManager.default.fileExists(atPath: socket) { usleep(100_000) }
        chmod(socket, 0o666)
        let r = try readWithTheStandIn(h, scope: global)
        XCTAssertEqual(r.values["get"], "s3cret", "the socket-activated daemon answered: \(r.summary)")
        XCTAssertEqual(r.values["calls"], "0", r.summary)
    }
}

/// The staged helper's owner and mode after a test replaced the file (as an upgrade would).
enum BuiltGatekeeperStaging {
    static func restoreSetuid(_ path: String) throws {
        XCTAssertEqual(chown(path, 0, 0), 0, "chown \(path): \(String(cString: strerror(errno)))")
        XCTAssertEqual(chmod(path, 0o4755), 0, "chmod \(path): \(String(cString: strerror(errno)))")
    }
}

/// A running `keygate-gatekeeper --serve`, found through /proc by the test hooks it was started with.
struct GateDaemonProcess {
    let pid: Int32

    /// The daemon whose environment carries KEYGATE_TEST_PAM_CONFDIR=`confdir` (one per CLIUserHarness).
    static func find(confdir: String) -> GateDaemonProcess? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry) else { continue }
            let candidate = GateDaemonProcess(pid: pid)
            guard candidate.arguments == ["keygate-gatekeeper", "--serve"] else { continue }
            if candidate.environment.contains("KEYGATE_TEST_PAM_CONFDIR=" + confdir) { return candidate }
        }
        return nil
    }

    private func nulSeparated(_ name: String) -> [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/\(name)") else { return [] }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    var arguments: [String] { nulSeparated("cmdline") }
    var environment: [String] { nulSeparated("environ") }

    /// The Uid:, Gid: and Groups: lines of /proc/PID/status.
    var ids: (uid: [String], gid: [String], groups: [String]) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func fields(_ key: String) -> [String] {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return ["missing"] }
            return line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        }
        return (fields("Uid:"), fields("Gid:"), fields("Groups:"))
    }

    /// The path of its listening socket (fd 3), from /proc/net/unix.
    var socketPath: String? {
        guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/3"),
              link.hasPrefix("socket:["), let inode = link.dropFirst(8).split(separator: "]").first,
              // Read to the end: String(contentsOfFile:) can stop at the first page of a /proc file
              // (its size reads 0), and a busy machine lists more sockets than one page holds.
              let data = FileHandle(forReadingAtPath: "/proc/net/unix")?.readDataToEndOfFile() else { return nil }
        let table = String(decoding: data, as: UTF8.self)
        for line in table.split(separator: "\n") {
            let f = line.split(separator: " ")
            if f.count >= 8, f[6] == inode { return String(f[7]) }
        }
        return nil
    }
}
