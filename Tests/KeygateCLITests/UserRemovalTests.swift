// Removing a user: the gatekeeper's per-uid state, root's, outlives the account. `keygate
// forget-user UID`, run as root after userdel, removes all of it (GatekeeperPaths.perUIDPaths),
// so that a new account given the same uid inherits nothing: no gate secret, no records, no
// lockout, no finger-unlock seed, no session count, no audit file of its own. The built (or
// installed) keygate and its gatekeeper, real test users through real pam_unix, userdel, useradd.
import Foundation
import KeygateTestSupport
import XCTest

final class UserRemovalTests: XCTestCase {
    private func forget(_ args: [String]) throws -> ProcessResult {
        try Subprocess.run([PackagePaths.keygateBinary, "forget-user"] + args, environment: TestUser.systemEnvironment, timeout: 30)
    }

    func test_forgetUser_afterUserdel_removesRootsStateOfTheUid_andRefusesALiveAccount() throws {
        let h = try CLIUserHarness()
        let uid = h.user.uid
        let used = try h.run("""
            printf %s g | keygate add -s svc -a a --access user-presence >/dev/null 2>&1
            printf 'get=%s\\n' "$(keygate get -s svc -a a)"
            """)
        XCTAssertEqual(used.values["get"], "g", used.summary)
        let state = ["/var/lib/keygate/gate/\(uid)", "/run/keygate/ts/\(uid)"]
        for path in state { XCTAssertTrue(FileManager.default.fileExists(atPath: path), "the gatekeeper kept \(path)") }

        let live = try forget([String(uid)])
        XCTAssertEqual(live.status, 206, live.summary)
        XCTAssertTrue(live.err.contains("uid \(uid) is still the account \(h.user.name)"), live.summary)
        for path in state { XCTAssertTrue(FileManager.default.fileExists(atPath: path), "nothing removed: \(path)") }

        _ = try Subprocess.run(["pkill", "-KILL", "-U", String(uid)], environment: TestUser.systemEnvironment, timeout: 10)
        let removed = try Subprocess.run(["userdel", "-f", "-r", h.user.name], environment: TestUser.systemEnvironment, timeout: 30)
        XCTAssertTrue(removed.status == 0 || removed.status == 12, removed.summary)   // 12: the mail spool was not there
        let r = try forget([String(uid)])
        XCTAssertEqual(r.status, 0, r.summary)
        XCTAssertTrue(r.out.contains("removed /var/lib/keygate/gate/\(uid)\n"), r.summary)
        XCTAssertTrue(r.out.contains("removed /run/keygate/ts/\(uid)\n"), r.summary)
        for path in state + ["/run/keygate/ts/\(uid).lock"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "a new account with uid \(uid) inherits nothing: \(path)")
        }
        let again = try forget([String(uid)])
        XCTAssertTrue(again.out.hasPrefix("nothing of uid \(uid) to remove: the gatekeeper kept no state for it\n"), again.summary)
        // Any process still running as the uid (one the pkill above raced with) is named, with what to do.
        let left = again.out.split(separator: "\n").dropFirst()
        XCTAssertTrue(left.allSatisfy { $0.hasPrefix("still running as uid \(uid): ") && $0.hasSuffix("pkill -KILL -u \(uid) before a new account gets uid \(uid)") },
                      again.summary)
        XCTAssertEqual(try forget(["alice"]).status, 2, "a uid is a number")
    }

    /// Root's folders, walked for any file or folder named by `uid` (the forgotten audit folder aside).
    private func filesNamed(by uid: UInt32) -> [String] {
        var found: [String] = []
        for root in ["/var/lib/keygate", "/run/keygate", "/var/log/keygate"] {
            for case let file as String in FileManager.default.enumerator(atPath: root) ?? NSEnumerator()
            where !file.hasPrefix("forgotten") {
                let name = (file as NSString).lastPathComponent
                if name == "\(uid)" || name.hasPrefix("\(uid).") { found.append(root + "/" + file) }
            }
        }
        return found.sorted()
    }

    /// What pam_keygate's session counter and an armed finger unlock leave in /run for `uid` (fprintd
    /// and a login are not part of this test): written by root, as the gatekeeper and pam_keygate
    /// write them, the seed bound to the account's gate secret and generation, made now, this boot.
    private func plantFingerSeedAndSessionCount(uid: UInt32) throws -> ProcessResult {
        try Subprocess.run(["python3", "-c", """
            import hashlib, os, struct, time
            uid = \(uid)
            state = "/var/lib/keygate/gate/%d/" % uid
            secret = open(state + "secret", "rb").read()
            generation = open(state + "generation", "rb").read()[:8]
            tag = hashlib.blake2b(b"keygate.gate.account.v1", key=secret, digest_size=16).digest()
            boot = open("/proc/sys/kernel/random/boot_id").read().strip().encode()
            now = int(time.clock_gettime(time.CLOCK_BOOTTIME))
            os.makedirs("/run/keygate/finger", mode=0o700, exist_ok=True)
            seed = b"keygate-finger-unlock 2\\n" + struct.pack(">I", len(boot)) + boot + struct.pack(">Q", now) + generation \\
                + tag + os.urandom(32)
            open("/run/keygate/finger/%d" % uid, "wb").write(seed)
            os.chmod("/run/keygate/finger/%d" % uid, 0o600)
            open("/run/keygate/%d.sessions" % uid, "w").write("%d 1\\n" % os.getpid())
            os.chmod("/run/keygate/%d.sessions" % uid, 0o600)
            print("generation=%d" % struct.unpack(">Q", generation)[0])
            """], environment: TestUser.systemEnvironment, timeout: 30)
    }

    /// Everything root keeps for the uid goes (the finger seed and the session count too), the audit
    /// record is kept aside, and a new account given the uid starts at a generation no box or seed
    /// of the old one names: a finger seed of the old account, even one left behind, opens nothing.
    func test_forgetUser_forgetsEveryPerUIDFile_andANewAccountWithTheUidInheritsNothing() throws {
        var old: CLIUserHarness? = try CLIUserHarness()
        let uid = try XCTUnwrap(old?.user.uid)
        let used = try XCTUnwrap(old).run("""
            printf %s g | keygate add -s svc -a a --access user-presence >/dev/null 2>&1
            printf 'get=%s\\n' "$(keygate get -s svc -a a)"
            """)
        XCTAssertEqual(used.values["get"], "g", used.summary)
        let planted = try plantFingerSeedAndSessionCount(uid: uid)
        XCTAssertEqual(planted.status, 0, planted.summary)
        let oldGeneration = try XCTUnwrap(planted.values["generation"], planted.summary)
        let seed = try Data(contentsOf: URL(fileURLWithPath: "/run/keygate/finger/\(uid)"))
        XCTAssertFalse(filesNamed(by: uid).isEmpty)

        let name = try XCTUnwrap(old?.user.name)
        _ = try Subprocess.run(["pkill", "-KILL", "-U", String(uid)], environment: TestUser.systemEnvironment, timeout: 10)
        _ = try Subprocess.run(["userdel", "-f", "-r", name], environment: TestUser.systemEnvironment, timeout: 30)
        let r = try forget([String(uid)])
        XCTAssertEqual(r.status, 0, r.summary)
        for path in ["/var/lib/keygate/gate/\(uid)", "/run/keygate/ts/\(uid)", "/run/keygate/finger/\(uid)", "/run/keygate/\(uid).sessions"] {
            XCTAssertTrue(r.out.contains("removed \(path)\n"), "\(path): \(r.summary)")
        }
        XCTAssertTrue(r.out.contains("removed /var/log/keygate/users/\(uid).log (moved to /var/log/keygate/forgotten/"), r.summary)
        XCTAssertEqual(filesNamed(by: uid), [], "root keeps nothing named by uid \(uid)")
        XCTAssertTrue(r.out.contains("Keygate had cached in uid \(uid)'s kernel keyring"),
                      "the old account's cached keys, which the kernel keeps past its last process, are dropped: \(r.summary)")
        old = nil   // the harness's own clean-up finds nothing left, before the uid is given again

        // A new account given the same uid.
        let new = try CLIUserHarness(uid: uid)
        XCTAssertEqual(new.user.uid, uid)
        let first = try new.run(GateRawClient.install + """

            gate fresh \(GateRawClient.Op.fingerUnlock) \(GateRawClient.noPrompt) seed=80
            printf %s n | keygate add -s svc -a a --access user-presence; echo add=$?
            """)
        XCTAssertEqual(first.values["fresh.status"], GateRawClient.itemNotFound, "no seed of the old account: \(first.summary)")
        XCTAssertEqual(first.values["add"], "0", first.summary)
        let generation = try Data(contentsOf: URL(fileURLWithPath: "/var/lib/keygate/gate/\(uid)/generation")).prefix(8)
            .reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        XCTAssertNotEqual("\(generation)", oldGeneration, "the new account's generation is not the old one's")
        XCTAssertNotEqual(generation, 1, "nor the 1 every account used to start at")

        // The old account's seed, put back (a backup, or a gatekeeper that wrote it after forget-user): refused.
        try seed.write(to: URL(fileURLWithPath: "/run/keygate/finger/\(uid)"))
        let again = try new.run(GateRawClient.install + """

            gate left \(GateRawClient.Op.fingerUnlock) \(GateRawClient.noPrompt) seed=80
            """)
        XCTAssertEqual(again.values["left.status"], GateRawClient.itemNotFound, again.summary)
        XCTAssertTrue(again.values["left.message"]?.contains("it was armed for another account") == true, again.summary)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/run/keygate/finger/\(uid)"), "the refused seed is dropped")
    }

    /// forget-user is root's code in root's program: a user who runs the setuid gatekeeper with
    /// `--forget-user`, for another uid or their own, is refused and nothing is removed; so is a
    /// user's `keygate forget-user`.
    func test_aUserRunningTheGatekeepersForgetUser_isRefused_andNothingIsRemoved() throws {
        let victim = try CLIUserHarness()
        let used = try victim.run("printf %s v | keygate add -s svc -a a --access user-presence >/dev/null 2>&1; keygate get -s svc -a a")
        XCTAssertEqual(used.status, 0, used.summary)
        let state = "/var/lib/keygate/gate/\(victim.user.uid)"
        XCTAssertTrue(FileManager.default.fileExists(atPath: state))
        let attacker = try CLIUserHarness(sharedUser: true)
        let r = try attacker.run(GateRawClient.install + """

            [ -u "$gatekeeper" ]; echo setuid=$?
            "$gatekeeper" --forget-user --removing \(victim.user.uid) >"$HOME/out" 2>"$HOME/err"; echo other=$?
            "$gatekeeper" --forget-user --removing $(id -u) >/dev/null 2>&1; echo own=$?
            keygate forget-user --removing \(victim.user.uid) >/dev/null 2>&1; echo cli=$?
            cat "$HOME/err"
            """)
        XCTAssertEqual(r.values["setuid"], "0", r.summary)
        XCTAssertEqual(r.values["other"], "2", r.summary)
        XCTAssertEqual(r.values["own"], "2", r.summary)
        XCTAssertEqual(r.values["cli"], "206", "errSecParam: root only: \(r.summary)")
        XCTAssertTrue(r.out.contains("--forget-user runs as root only"), r.summary)
        XCTAssertTrue(FileManager.default.fileExists(atPath: state), "the victim's gate state is untouched")
    }
}
