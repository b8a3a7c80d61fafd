// The headless Secret Service recipe of contrib/systemd/: gnome-keyring-daemon run the
// way keygate-secret-service.service runs it (foreground, secrets only, a control
// socket under XDG_RUNTIME_DIR), on a private bus with a fresh HOME, and
// contrib/systemd/keygate-keyring-unlock creating the login keyring from the password
// at the first unlock. A small supervisor stands in for systemd's restart. Real
// gnome-keyring, real dbus; the password goes through a file descriptor only.
import Foundation
import KeygateTestSupport
import XCTest

final class HeadlessKeyringTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself
    private var folder = ""

    override func setUpWithError() throws {
        for tool in ["/usr/bin/dbus-run-session", "/usr/bin/gnome-keyring-daemon", "/usr/bin/secret-tool", "/usr/bin/dbus-send", "/usr/bin/python3"] {
            try Requirement.require(FileManager.default.isExecutableFile(atPath: tool), tool)
        }
        folder = NSTemporaryDirectory() + "keygate-headless-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        for sub in ["home", "run"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs `steps` inside a private bus where the daemon runs as the unit runs it.
    /// `restart_daemon` (the unit's restart) and `locked` (the login collection's Locked) are defined;
    /// $RESTART is a command that does what `systemctl --user restart` does for the unit.
    private func inHeadlessSession(_ steps: String) throws -> ProcessResult {
        let library = """
            export HOME='\(folder)/home' XDG_RUNTIME_DIR='\(folder)/run'
            unset XDG_DATA_HOME
            PIDFILE='\(folder)/daemon.pid'
            owned() {
                [ "$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / \\
                    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets | awk '{print $NF}')" = "$1" ]
            }
            start_daemon() {
                /usr/bin/gnome-keyring-daemon --foreground --components=secrets \\
                    --control-directory="$XDG_RUNTIME_DIR/keyring" >>'\(folder)/daemon.log' 2>&1 &
                echo $! > "$PIDFILE"
                for i in $(seq 50); do owned true && return 0; sleep 0.1; done
                echo "daemon did not start" >&2; return 1
            }
            restart_daemon() {   # synchronous, as systemctl restart of a Type=dbus unit
                kill "$(cat "$PIDFILE")"
                for i in $(seq 50); do owned false && break; sleep 0.1; done
                start_daemon
            }
            locked() {
                dbus-send --session --print-reply=literal --dest=org.freedesktop.secrets \\
                    /org/freedesktop/secrets/collection/login org.freedesktop.DBus.Properties.Get \\
                    string:org.freedesktop.Secret.Collection string:Locked 2>/dev/null | awk '{print $NF}'
            }
            """
        try library.write(toFile: folder + "/lib.sh", atomically: true, encoding: .utf8)
        try "source '\(folder)/lib.sh'; restart_daemon\n".write(toFile: folder + "/restart.sh", atomically: true, encoding: .utf8)
        let script = """
            set -u
            source '\(folder)/lib.sh'
            UNLOCK='\(PackagePaths.root)/contrib/systemd/keygate-keyring-unlock'
            RESTART="bash '\(folder)/restart.sh'"
            start_daemon || exit 90
            trap 'kill "$(cat "$PIDFILE")" 2>/dev/null' EXIT
            \(steps)
            """
        return try Subprocess.run(["/usr/bin/timeout", "60", "/usr/bin/dbus-run-session", "--", "/bin/bash", "-c", script])
    }

    private func values(_ r: ProcessResult) -> [String: String] {
        var out: [String: String] = [:]
        for line in r.out.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { out[String(parts[0])] = String(parts[1]) }
        }
        return out
    }

    func test_firstUnlock_createsAnEncryptedLoginKeyring_thatLaterUnlocksOnlyWithThatPassword() throws {
        let r = try inHeadlessSession("""
            export KEYGATE_SECRET_SERVICE_RESTART="$RESTART"
            "$UNLOCK" --password-fd 3 3<<<'correct horse' 2>&1; echo first=$?
            echo created=$([ -f "$HOME/.local/share/keyrings/login.keyring" ] && echo yes || echo no)
            echo alias=$(cat "$HOME/.local/share/keyrings/default" 2>/dev/null)
            echo -n 'the-secret' | timeout 5 secret-tool store --label=t svc headless; echo store=$?
            echo lookup=$(timeout 5 secret-tool lookup svc headless)
            if grep -q 'the-secret' "$HOME/.local/share/keyrings/login.keyring"; then echo plaintext=yes; else echo plaintext=no; fi
            restart_daemon
            echo lockedAfterRestart=$(locked)
            "$UNLOCK" --password-fd 3 3<<<'wrong horse' >/dev/null 2>&1; echo wrong=$?
            echo lockedAfterWrong=$(locked)
            "$UNLOCK" --password-fd 3 3<<<'correct horse' 2>&1; echo second=$?
            echo lockedAfterRight=$(locked)
            echo lookupAgain=$(timeout 5 secret-tool lookup svc headless)
            """)
        let v = values(r)
        let summary = "out: \(r.out)\nerr: \(r.err)"
        XCTAssertEqual(v["first"], "0", summary)
        XCTAssertTrue(r.out.contains("login keyring created and unlocked"), summary)
        XCTAssertEqual(v["created"], "yes", summary)
        XCTAssertEqual(v["alias"], "login", "keygate and secret-tool use the default alias: \(summary)")
        XCTAssertEqual(v["store"], "0", "no GUI prompt was needed: \(summary)")
        XCTAssertEqual(v["lookup"], "the-secret", summary)
        XCTAssertEqual(v["plaintext"], "no", "the keyring file is encrypted with the password: \(summary)")
        XCTAssertEqual(v["lockedAfterRestart"], "true", "a restart (a reboot) locks it again: \(summary)")
        XCTAssertEqual(v["wrong"], "1", summary)
        XCTAssertEqual(v["lockedAfterWrong"], "true", summary)
        XCTAssertEqual(v["second"], "0", summary)
        XCTAssertEqual(v["lockedAfterRight"], "false", summary)
        XCTAssertEqual(v["lookupAgain"], "the-secret", summary)
    }

    func test_noTerminalAndNoPasswordFd_failsClearly_withoutHanging() throws {
        let r = try inHeadlessSession("""
            "$UNLOCK" </dev/null 2>&1; echo status=$?
            """)
        XCTAssertEqual(values(r)["status"], "1", r.out)
        XCTAssertTrue(r.out.contains("no terminal to ask for the password: use --password-fd N"), r.out)
    }

    func test_emptyPassword_isRefused_becauseItWouldMakeAPlainTextKeyring() throws {
        let r = try inHeadlessSession("""
            "$UNLOCK" --password-fd 3 3<<<'' 2>&1; echo status=$?
            echo created=$([ -e "$HOME/.local/share/keyrings/login.keyring" ] && echo yes || echo no)
            """)
        XCTAssertEqual(values(r)["status"], "1", r.out)
        XCTAssertTrue(r.out.contains("unencrypted keyring"), r.out)
        XCTAssertEqual(values(r)["created"], "no", r.out)
    }
}
