// The host protector end to end, as root, with real parts: a service account made
// here with no password, its own gnome-keyring (UserSession), the real kernel keyring,
// a host key at a temporary path (KEYGATE_TEST_HOST_KEY) and policy files in a
// temporary root (KEYGATE_TEST_POLICY_ROOT). A reboot is simulated by clearing the
// account's user keyring (`keyctl clear @u`), then the boot step
// (`keygate unlock --host-protector --user NAME`) and a fresh process that reads.
import Foundation
import KeygateTestSupport
import XCTest

final class HostProtectorTests: XCTestCase {
    private var user: TestUser?

    override func tearDown() {
        user?.remove()
        user = nil
    }

    /// A passwordless service account (password field `*`), removed at teardown.
    private func serviceAccount() throws -> TestUser {
        try Requirement.require(Requirement.isRoot, "root, to create a service account and derive host keys")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary), "the built keygate binary")
        let made = try TestUser.create()
        user = made
        let r = try Subprocess.run(["usermod", "-p", "*", made.name])
        XCTAssertEqual(r.status, 0, "usermod -p '*': \(r.summary)")
        return made
    }

    /// A world-readable policy root with vendor/admin/user layers (admin and vendor root-owned).
    private func policyRoot(admin: [String: String], user files: [String: String] = [:], userOwner: TestUser? = nil) throws -> String {
        let layered = admin.map { ("admin/" + $0.key, $0.value) } + files.map { ("user/" + $0.key, $0.value) }
        let root = try PolicyFolder.make(Dictionary(uniqueKeysWithValues: layered), userOwner: userOwner?.name, prefix: "keygate-hostprot")
        addTeardownBlock { PolicyFolder.remove(root) }
        return root
    }

    private func writePolicy(_ path: String, _ text: String) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
    }

    /// A folder for the test host key (root only), removed at teardown.
    private func hostKeyPath() throws -> String {
        let dir = NSTemporaryDirectory() + "keygate-hostkey-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir + "/host.key"
    }

    /// Runs the keygate binary as root with the test policy root and host key.
    private func asRoot(_ args: [String], policy: String, hostKey: String) throws -> ProcessResult {
        var env = TestUserEnvironment.base
        env["KEYGATE_TEST_POLICY_ROOT"] = policy
        env["KEYGATE_TEST_HOST_KEY"] = hostKey
        return try Subprocess.run([PackagePaths.keygateBinary] + args, environment: env, currentDirectory: "/", timeout: 60)
    }

    /// Runs `script` as the account, in its own session bus and gnome-keyring, no tty, no askpass.
    private func asUser(_ account: TestUser, _ script: String, policy: String) throws -> ProcessResult {
        try UserSession.run(as: account, script: script, environment: ["KEYGATE_TEST_POLICY_ROOT": policy])
    }

    private func keyringCleared(_ account: TestUser) throws {
        let r = try Subprocess.run(["runuser", "-u", account.name, "--", "keyctl", "clear", "@u"], environment: TestUserEnvironment.base)
        XCTAssertEqual(r.status, 0, "keyctl clear @u: \(r.summary)")
    }

    /// Runs `script` as the account the way docs/SERVICES.md does: `runuser -u svc -- keygate …`,
    /// no session bus, no terminal, no askpass, and no KEYGATE_STORE.
    private func asUserWithoutBus(_ account: TestUser, _ script: String, policy: String) throws -> ProcessResult {
        let tools = try UserSession.stageTools()
        return try Subprocess.run(["runuser", "-u", account.name, "--", "env", "-i", "HOME=\(account.home)",
                                   "PATH=\(tools):/usr/bin:/bin", "KEYGATE_TEST_POLICY_ROOT=\(policy)",
                                   "setsid", "-w", "bash", "-c", script],
                                  environment: TestUserEnvironment.base, currentDirectory: "/", timeout: 60)
    }

    /// docs/SERVICES.md step by step, as written: root makes the keychain (from a session that
    /// has a bus, as an administrator's may), the account adds with no bus at all and gets the
    /// embedded store by itself; after a reboot the boot step opens it again.
    func test_servicesGuide_stepByStep_noBusForTheAccount_usesTheEmbeddedStore() throws {
        let svc = try serviceAccount()
        let hostKey = try hostKeyPath()
        let policy = try policyRoot(admin: ["10-services.policy": """
            [default]
            host-protector = \(svc.name)

            [service "backup-*"]
            access = none
            allow-non-interactive = yes
            accessible = after-first-unlock
            """])
        XCTAssertEqual(try asRoot(["setup-host"], policy: policy, hostKey: hostKey).status, 0)
        var rootEnvironment = TestUserEnvironment.base
        rootEnvironment["KEYGATE_TEST_POLICY_ROOT"] = policy
        rootEnvironment["KEYGATE_TEST_HOST_KEY"] = hostKey
        rootEnvironment["DBUS_SESSION_BUS_ADDRESS"] = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"]
        let made = try Subprocess.run([PackagePaths.keygateBinary, "init", "--host-protector", "--user", svc.name],
                                      environment: rootEnvironment, currentDirectory: "/", timeout: 60)
        XCTAssertEqual(made.status, 0, made.summary)

        let added = try asUserWithoutBus(svc, """
            printf %s s3-key | keygate add -s backup-s3 -a key --accessible after-first-unlock; echo add=$?
            printf 'v=%s\\n' "$(keygate get -s backup-s3 -a key)"
            echo store=$(cat "$HOME/.local/share/keygate/store")
            [ -f "$HOME/.local/share/keygate/items.sqlite" ] && echo sqlite=yes
            """, policy: policy)
        XCTAssertEqual(added.values["add"], "0", "step 4 works with no session bus: \(added.summary)")
        XCTAssertEqual(added.values["v"], "s3-key", added.summary)
        XCTAssertEqual(added.values["store"], "embedded", added.summary)
        XCTAssertEqual(added.values["sqlite"], "yes", added.summary)

        try keyringCleared(svc)    // a reboot
        let boot = try Subprocess.run([PackagePaths.keygateBinary, "unlock", "--host-protector", "--user", svc.name],
                                      environment: rootEnvironment, currentDirectory: "/", timeout: 60)
        XCTAssertEqual(boot.status, 0, boot.summary)
        let read = try asUserWithoutBus(svc, "printf 'v=%s\\n' \"$(keygate get -s backup-s3 -a key)\"", policy: policy)
        XCTAssertEqual(read.values["v"], "s3-key", read.summary)
    }

    func test_serviceAccount_readsAfterFirstUnlockItems_afterReboot_throughTheHostProtector() throws {
        let svc = try serviceAccount()
        let hostKey = try hostKeyPath()
        let policy = try policyRoot(admin: ["10-services.policy": "[default]\nhost-protector = \(svc.name)\naccess = none\n"])
        XCTAssertEqual(try asRoot(["setup-host"], policy: policy, hostKey: hostKey).status, 0)

        let made = try asRoot(["init", "--host-protector", "--user", svc.name], policy: policy, hostKey: hostKey)
        XCTAssertEqual(made.status, 0, made.summary)
        XCTAssertTrue(made.err.contains("host protector"), made.summary)
        XCTAssertFalse(made.out.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "the recovery key is shown once: \(made.summary)")
        let protectors = svc.home + "/.local/share/keygate/protectors"
        XCTAssertTrue(FileManager.default.fileExists(atPath: protectors + "/host.json"), made.summary)
        XCTAssertFalse(FileManager.default.fileExists(atPath: protectors + "/login.json"), "no password protector")
        let owner = try FileManager.default.attributesOfItem(atPath: protectors + "/host.json")[.ownerAccountID] as? NSNumber
        XCTAssertEqual(owner?.uint32Value, svc.uid, "the user's files stay the user's")

        let added = try asUser(svc, """
            printf %s db-secret | keygate add -s svc-db -a app --accessible after-first-unlock; echo add=$?
            printf %s gated-secret | keygate add -s gated -a app --accessible after-first-unlock; echo addg=$?
            printf 'v=%s\\n' "$(keygate get -s svc-db -a app)"
            printf %s never | keygate add -s never -a app --access user-presence; echo addn=$?
            """, policy: policy)
        XCTAssertEqual(added.values["add"], "0", added.summary)
        XCTAssertEqual(added.values["addg"], "0", added.summary)
        // An item this account can never read is stored, with a warning that says why and what to do.
        XCTAssertEqual(added.values["addn"], "0", added.summary)
        XCTAssertTrue(added.err.contains("""
            keygate: stored never/app with access user-presence: as given
            keygate: warning: the keychain of \(svc.name) has no password protector (only the host protector and the recovery key \
            open it), so nothing can ever satisfy user-presence and every read of this item will fail (exit 36): store it with \
            --access none, or give it default-access = none and no minimum-access in a system policy\n
            """), added.summary)
        XCTAssertEqual(added.err.components(separatedBy: "has no password protector").count, 2,
                       "one warning, for that item only, none for the items it can read: \(added.summary)")
        XCTAssertEqual(added.values["v"], "db-secret", added.summary)

        // Reboot: every key of the account is gone from the kernel.
        try keyringCleared(svc)
        let locked = try asUser(svc, "keygate get -s svc-db -a app; echo get=$?", policy: policy)
        XCTAssertEqual(locked.values["get"], "36", "no password to ask for: \(locked.summary)")
        XCTAssertTrue(locked.err.contains("--host-protector"), "says what to do: \(locked.summary)")

        // The boot step (a unit's ExecStartPre=+), then a fresh process with no prompt.
        let boot = try asRoot(["unlock", "--host-protector", "--user", svc.name], policy: policy, hostKey: hostKey)
        XCTAssertEqual(boot.status, 0, boot.summary)
        let read = try asUser(svc, """
            printf 'v=%s\\n' "$(keygate get -s svc-db -a app)"
            keygate lock; echo lock=$?
            printf 'afterlock=%s\\n' "$(keygate get -s svc-db -a app)"
            """, policy: policy)
        XCTAssertEqual(read.values["v"], "db-secret", read.summary)
        XCTAssertEqual(read.values["lock"], "0", read.summary)
        XCTAssertEqual(read.values["afterlock"], "db-secret", "after-first-unlock outlives a lock, until reboot: \(read.summary)")

        // The same account's presence item: no password, no tty, no askpass: 36, fast.
        try writePolicy(policy + "/admin/20-gated.policy", "[service \"gated\"]\naccess = user-presence\n")
        let gated = try asUser(svc, """
            start=$(date +%s%N); keygate get -s gated -a app; echo get=$?
            echo ms=$(( ($(date +%s%N) - start) / 1000000 ))
            """, policy: policy)
        XCTAssertEqual(gated.values["get"], "36", gated.summary)
        XCTAssertLessThan(Int(gated.values["ms"] ?? "") ?? .max, 2000, "fails fast: \(gated.summary)")
        XCTAssertTrue(gated.err.contains("no password protector"), "says why: \(gated.summary)")
    }

    func test_hostProtector_isRefused_whenThePolicyDoesNotNameTheUser_orOnlyTheUsersOwnFileDoes() throws {
        let svc = try serviceAccount()
        let hostKey = try hostKeyPath()
        let protectors = svc.home + "/.local/share/keygate/protectors"

        let none = try policyRoot(admin: ["10-other.policy": "[default]\nhost-protector = someone-else, %no-such-group\n"])
        XCTAssertEqual(try asRoot(["setup-host"], policy: none, hostKey: hostKey).status, 0)
        let refused = try asRoot(["init", "--host-protector", "--user", svc.name], policy: none, hostKey: hostKey)
        XCTAssertEqual(refused.status, 206, refused.summary)
        XCTAssertTrue(refused.err.contains("host-protector = \(svc.name)"), "says how to enable it: \(refused.summary)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: protectors + "/host.json"))

        let own = try policyRoot(admin: [:], user: ["50-mine.policy": "[default]\nhost-protector = \(svc.name)\n"], userOwner: svc)
        let selfEnabled = try asRoot(["init", "--host-protector", "--user", svc.name], policy: own, hostKey: hostKey)
        XCTAssertEqual(selfEnabled.status, 206, "a user's own policy cannot enable it: \(selfEnabled.summary)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: protectors + "/host.json"))
        let bootRefused = try asRoot(["unlock", "--host-protector", "--user", svc.name], policy: own, hostKey: hostKey)
        XCTAssertEqual(bootRefused.status, 206, bootRefused.summary)

        // A host-protector key outside [default] is a parse error naming file:line:column.
        let misplaced = try policyRoot(admin: ["10-bad.policy": "[service \"x\"]\nhost-protector = \(svc.name)\n"])
        let check = try asRoot(["policy", "check", misplaced + "/admin/10-bad.policy"], policy: misplaced, hostKey: hostKey)
        XCTAssertNotEqual(check.status, 0, check.summary)
        XCTAssertTrue((check.out + check.err).contains("10-bad.policy:2:1"), check.summary)
    }

    func test_hostProtector_needsRoot() throws {
        let svc = try serviceAccount()
        let policy = try policyRoot(admin: ["10-services.policy": "[default]\nhost-protector = \(svc.name)\n"])
        let r = try asUser(svc, "keygate unlock --host-protector --user \(svc.name); echo st=$?", policy: policy)
        XCTAssertEqual(r.values["st"], "206", r.summary)
        XCTAssertTrue(r.err.contains("only root"), r.summary)
    }
}

/// The environment root's commands run with: a fixed PATH, nothing inherited.
private enum TestUserEnvironment {
    static let base = ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
}
