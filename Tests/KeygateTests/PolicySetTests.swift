// Loading policy folders and deciding: precedence (vendor < admin < user, later file,
// most specific section), user files that may only tighten, refused files (group-
// writable, not root's, symlinked), fail-closed decisions, and the stricter() rules.
import Foundation
import Glibc
import KeygateTestSupport
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

/// A temporary policy root with vendor/, admin/ and user/ folders, removed on deinit.
final class PolicyTree {
    let root: String
    var vendor: String { root + "/vendor" }
    var admin: String { root + "/admin" }
    var user: String { root + "/user" }

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/kg-policy.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw NSError(domain: "mkdtemp", code: Int(errno)) }
        root = String(cString: made)
        chmod(root, 0o755)
        for folder in [vendor, admin, user] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o755])
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    @discardableResult
    func write(_ folder: String, _ name: String, _ text: String, mode: mode_t = 0o644) throws -> String {
        let path = folder + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, mode)
        return path
    }

    var folders: [(PolicyLayer, String)] { [(.vendor, vendor), (.admin, admin), (.user, user)] }
    func load() -> PolicySet { PolicySet.load(folders: folders) }
}

final class PolicySetTests: XCTestCase {
    private var tree: PolicyTree!

    override func setUpWithError() throws { tree = try PolicyTree() }
    override func tearDown() { tree = nil }

    private func decide(_ service: String, _ account: String = "") throws -> PolicyDecision {
        try tree.load().decision(service: service, account: account)
    }

    /// The settings a user file may tighten but never loosen, compared as one value so that a
    /// failure shows every one of them.
    private struct Tightenable: Equatable {
        var access: AccessControl?
        var accessible: Accessibility?
        var reuseDuration: UInt32
        var reuseScope: ReuseScope.Kind
        var maxTries: Int
        var lockoutSeconds: UInt32
        var lockAfter: UInt32

        init(_ access: AccessControl?, _ accessible: Accessibility?, reuse: UInt32, _ reuseScope: ReuseScope.Kind, tries: Int,
             lockout: UInt32, lockAfter: UInt32) {
            (self.access, self.accessible, reuseDuration, self.reuseScope) = (access, accessible, reuse, reuseScope)
            (maxTries, lockoutSeconds, self.lockAfter) = (tries, lockout, lockAfter)
        }

        init(_ d: PolicyDecision) {
            self.init(d.bothAccess, d.accessible, reuse: d.policy.reuseDuration, d.policy.reuseScope, tries: d.policy.maxTries,
                      lockout: d.policy.lockoutSeconds, lockAfter: d.policy.lockAfter)
        }
    }

    // MARK: - precedence

    func test_precedence_vendorThenAdminThenUser() throws {
        let v = try tree.write(tree.vendor, "00-default.policy", "[default]\nreuse-duration = 300\nlockout = 60\n")
        let a = try tree.write(tree.admin, "10-site.policy", "[default]\nreuse-duration = 200\n")
        let u = try tree.write(tree.user, "me.policy", "[default]\nreuse-duration = 100\n")
        var d = try decide("anything")
        XCTAssertEqual(d.policy.reuseDuration, 100)
        XCTAssertEqual(d.origins[.reuseDuration], PolicyOrigin(file: u, line: 2, section: "[default]", layer: .user))
        XCTAssertEqual(d.origins[.lockout]?.file, v)
        XCTAssertEqual(d.warnings, [])
        try FileManager.default.removeItem(atPath: u)
        d = try decide("anything")
        XCTAssertEqual(d.policy.reuseDuration, 200)
        XCTAssertEqual(d.origins[.reuseDuration]?.file, a)
        XCTAssertEqual(d.origins[.reuseDuration]?.layer, .admin)
    }

    func test_laterFileWins_inLexicalByteOrder_keyByKey() throws {
        try tree.write(tree.admin, "9-late.policy", "[service \"vpn*\"]\nmax-tries = 1\n")
        try tree.write(tree.admin, "10-early.policy", "[service \"vpn*\"]\nmax-tries = 2\nlockout = 99\n")
        let set = tree.load()
        XCTAssertEqual(set.files.map { ($0.path as NSString).lastPathComponent }, ["10-early.policy", "9-late.policy"],
                       "\"10\" sorts before \"9\" byte by byte, like sudo's includedir")
        let d = try set.decision(service: "vpn", account: "x")
        XCTAssertEqual(d.policy.maxTries, 1, "the later file overrides")
        XCTAssertEqual(d.policy.lockoutSeconds, 99, "keys the later file does not set are kept")
    }

    func test_mostSpecificSectionWins_serviceBeforeAccount() throws {
        try tree.write(tree.vendor, "50-vpn.policy", """
            [service "vpn*"]
            prompt = glob
            [service "vpn-prod"]
            prompt = exact
            [account "alice"]
            prompt = account
            [service "vpn-prod" account "alice"]
            max-tries = 1
            """)
        // A later, less specific admin [default] does not override a more specific vendor section.
        try tree.write(tree.admin, "10.policy", "[default]\nprompt = default\nmax-tries = 2\n")
        XCTAssertEqual(try decide("vpn-prod", "alice").prompt, "exact")
        XCTAssertEqual(try decide("vpn-prod", "alice").policy.maxTries, 1)
        XCTAssertEqual(try decide("vpn-prod", "bob").policy.maxTries, 2)
        XCTAssertEqual(try decide("vpn-test", "alice").prompt, "glob", "a service glob beats an account-only section")
        XCTAssertEqual(try decide("mail", "alice").prompt, "account")
        XCTAssertEqual(try decide("mail", "bob").prompt, "default")
        XCTAssertEqual(try decide("mail", "bob").origins[.prompt]?.section, "[default]")
        XCTAssertEqual(try decide("vpn-prod", "alice").origins[.prompt]?.section, "[service \"vpn-prod\"]")
    }

    func test_noFiles_givesTheBuiltInDefaults_withNoOrigins() throws {
        let d = try decide("x")
        XCTAssertEqual(d.policy, Policy.default)
        XCTAssertNil(d.bothAccess)
        XCTAssertFalse(d.allowNonInteractive)
        XCTAssertTrue(d.origins.isEmpty)
    }

    func test_absentFolders_areListedAsAbsent() {
        let set = PolicySet.load(folders: [(.admin, tree.root + "/missing")])
        XCTAssertEqual(set.files.map(\.state), ["absent"])
    }

    func test_systemLayers_canLoosenEachOther_accessNoneOverridesVendorPresence() throws {
        try tree.write(tree.vendor, "00.policy", "[default]\naccess = user-presence\n")
        try tree.write(tree.admin, "40-ci.policy", "[service \"ci-*\"]\naccess = none\nallow-non-interactive = yes\n")
        XCTAssertNil(try decide("ci-token").bothAccess)
        XCTAssertTrue(try decide("ci-token").allowNonInteractive)
        XCTAssertEqual(try decide("mail").bothAccess, .userPresence)
    }

    // MARK: - user files tighten only

    func test_userFile_tighteningIsAccepted() throws {
        try tree.write(tree.vendor, "00.policy", "[default]\naccess = user-presence\nreuse-duration = 300\nreuse-scope = session\nlockout = 60\n")
        let u = try tree.write(tree.user, "me.policy", """
            [service "bank"]
            access = current-set
            accessible = when-unlocked-this-device-only
            reuse-duration = 0
            reuse-scope = ppid
            max-tries = 1
            lockout = 10m
            lock-after = 60
            prompt = My bank
            """)
        let d = try decide("bank")
        XCTAssertEqual(d.warnings, [])
        XCTAssertEqual(Tightenable(d), Tightenable(.currentSet, .whenUnlockedThisDeviceOnly, reuse: 0, .ppid, tries: 1, lockout: 600, lockAfter: 60))
        XCTAssertEqual(d.prompt, "My bank")
        for key in [PolicyKey.defaultAccess, .minimumAccess] {
            XCTAssertEqual(d.origins[key], PolicyOrigin(file: u, line: 2, section: "[service \"bank\"]", layer: .user), key.rawValue)
        }
    }

    /// finger-unlock: 48 h by default, an administrator's value in [default], a user file may
    /// shorten it (never lengthen it), and outside [default] it is refused like host-protector.
    func test_fingerUnlock_defaultsTo48Hours_theAdminSetsIt_aUserMayOnlyShortenIt() throws {
        XCTAssertEqual(try decide("any").policy.fingerUnlock, 172_800)
        try tree.write(tree.admin, "10.policy", "[default]\nfinger-unlock = 8h\n")
        XCTAssertEqual(try decide("any").policy.fingerUnlock, 8 * 3600)
        try tree.write(tree.user, "me.policy", "[default]\nfinger-unlock = 1h\n")
        XCTAssertEqual(try decide("any").policy.fingerUnlock, 3600, "shorter: taken")
        try tree.write(tree.user, "me.policy", "[default]\nfinger-unlock = 100h\n")
        let longer = try decide("any")
        XCTAssertEqual(longer.policy.fingerUnlock, 8 * 3600, "longer: ignored")
        XCTAssertTrue(longer.warnings.contains { $0.contains("ignored finger-unlock") }, "\(longer.warnings)")
        try tree.write(tree.admin, "20.policy", "[service \"vpn\"]\nfinger-unlock = 0\n")
        XCTAssertThrowsError(try decide("vpn"), "keychain-wide: [default] only")
    }

    func test_userFile_looseningIsIgnored_withAWarningNamingFileAndLine() throws {
        try tree.write(tree.vendor, "00.policy", """
            [default]
            access = current-set
            accessible = when-unlocked
            reuse-duration = 300
            reuse-scope = tty
            max-tries = 3
            lockout = 60
            lock-after = 900
            pam-service = keygate
            """)
        let u = try tree.write(tree.user, "loose.policy", """
            [default]
            access = none
            accessible = after-first-unlock
            reuse-duration = 1h
            reuse-scope = global
            max-tries = 10
            lockout = 1
            lock-after = 1h
            pam-service = other
            allow-non-interactive = yes
            """)
        let d = try decide("anything")
        XCTAssertEqual(Tightenable(d), Tightenable(.currentSet, .whenUnlocked, reuse: 300, .tty, tries: 3, lockout: 60, lockAfter: 900),
                       "every loosening ignored")
        XCTAssertEqual(d.policy.pamService, "keygate")
        XCTAssertFalse(d.allowNonInteractive)
        XCTAssertEqual(d.warnings.count, 10, "access = none is ignored for both keys it sets: \(d.warnings.joined(separator: "\n"))")
        for (line, key) in [(2, "default-access"), (2, "minimum-access"), (4, "reuse-duration"), (9, "pam-service"),
                            (10, "allow-non-interactive")] {
            XCTAssertTrue(d.warnings.contains { $0.hasPrefix("\(u):\(line): ignored \(key) = ") },
                          "a warning names \(u):\(line) for \(key): \(d.warnings)")
        }
        XCTAssertEqual(d.origins[.reuseDuration]?.layer, .vendor, "the ignored key leaves the system's origin")
    }

    func test_defaultAccess_andMinimumAccess_areSeparateKeys_eachWithItsOrigin() throws {
        let vendor = try tree.write(tree.vendor, "00.policy", "[default]\ndefault-access = user-presence\n")
        let admin = try tree.write(tree.admin, "10.policy", "[service \"vpn*\"]\nminimum-access = device-passcode\n")
        let mail = try decide("mail")
        XCTAssertEqual(mail.defaultAccess, .userPresence)
        XCTAssertNil(mail.minimumAccess, "no floor for items the admin section does not match")
        XCTAssertEqual(mail.origins[.defaultAccess], PolicyOrigin(file: vendor, line: 2, section: "[default]", layer: .vendor))
        XCTAssertNil(mail.origins[.minimumAccess])
        let vpn = try decide("vpn-office")
        XCTAssertEqual(vpn.defaultAccess, .userPresence)
        XCTAssertEqual(vpn.minimumAccess, .devicePasscode)
        XCTAssertEqual(vpn.origins[.minimumAccess], PolicyOrigin(file: admin, line: 2, section: "[service \"vpn*\"]", layer: .admin))
    }

    func test_userFile_tightensItsOwnDefaultAndFloor_andCannotLowerEither() throws {
        try tree.write(tree.vendor, "00.policy", "[default]\ndefault-access = user-presence\n")
        try tree.write(tree.admin, "10.policy", "[service \"bank\"]\nminimum-access = user-presence\n")
        let u = try tree.write(tree.user, "me.policy", """
            [service "bank"]
            minimum-access = none
            default-access = none
            [service "notes"]
            minimum-access = current-set
            default-access = current-set
            """)
        let bank = try decide("bank")
        XCTAssertEqual(bank.minimumAccess, .userPresence, "a user cannot lower the admin's floor")
        XCTAssertEqual(bank.defaultAccess, .userPresence, "nor the system's default")
        XCTAssertTrue(bank.warnings.contains { $0.hasPrefix("\(u):2: ignored minimum-access = none") }, "\(bank.warnings)")
        XCTAssertTrue(bank.warnings.contains { $0.hasPrefix("\(u):3: ignored default-access = none") }, "\(bank.warnings)")
        let notes = try decide("notes")
        XCTAssertEqual(notes.minimumAccess, .currentSet, "a user raises the floor of their own items")
        XCTAssertEqual(notes.defaultAccess, .currentSet)
        XCTAssertEqual(notes.warnings, [])
    }

    func test_userAccess_combinesWithTheSystems_neverWeaker() throws {
        try tree.write(tree.vendor, "00.policy", "[default]\naccess = device-passcode\n")
        try tree.write(tree.user, "me.policy", "[default]\naccess = biometry-any\n")
        XCTAssertEqual(try decide("x").bothAccess, [.devicePasscode, .biometryAny, .and])
    }

    // MARK: - refused files and fail-closed

    /// Loads the tree and expects the file at `path` refused with `reason` (its state begins
    /// "refused: " and the reason), and every decision to fail closed naming the file; returns
    /// that failure for further checks.
    @discardableResult
    private func assertRefusesFile(_ path: String, _ reason: String,
                                   file: StaticString = #filePath, line: UInt = #line) -> KeychainError? {
        let set = tree.load()
        let state = set.files.first { $0.path == path }?.state ?? ""
        XCTAssertTrue(state.hasPrefix("refused: ") && state.contains(reason), "\(set.files.map(\.state))", file: file, line: line)
        let error = assertThrowsKeychainError(.notAvailable, file: file, line: line) { try set.decision(service: "s", account: "a") }
        XCTAssertTrue(error?.message.contains(path) ?? false, error?.message ?? "", file: file, line: line)
        return error
    }

    func test_groupWritableAdminFile_isRefused_andDecisionFailsClosed_namingIt() throws {
        let path = try tree.write(tree.admin, "10-x.policy", "[default]\nmax-tries = 1\n", mode: 0o664)
        let error = assertRefusesFile(path, "\(path) is writable by its group")
        XCTAssertTrue(error?.message.contains("keygate policy check") ?? false)
    }

    func test_worldWritableAdminFolder_isRefused() throws {
        chmod(tree.admin, 0o777)
        let set = tree.load()
        XCTAssertTrue(set.files.contains { $0.path == tree.admin && $0.state.contains("writable by others") })
        XCTAssertNotNil(assertThrowsKeychainError(.notAvailable) { try set.decision(service: "s", account: "a") })
    }

    func test_adminFileNotOwnedByRoot_isRefused_namingOwnerAndFile() throws {
        try Requirement.require(Requirement.isRoot, "root, to chown a policy file to nobody")
        let path = try tree.write(tree.admin, "10-x.policy", "[default]\nmax-tries = 1\n")
        XCTAssertEqual(chown(path, 65534, 65534), 0)
        assertRefusesFile(path, "\(path) is owned by uid 65534, not root")
    }

    func test_symlinkedAdminFile_isRefused_evenToARootOwnedTarget() throws {
        let target = try tree.write(tree.root, "real.policy", "[default]\nmax-tries = 1\n")
        let link = tree.admin + "/10-link.policy"
        XCTAssertEqual(symlink(target, link), 0)
        assertRefusesFile(link, "\(link) is a symbolic link")
    }

    func test_symlinkedAdminFolder_isRefused() throws {
        let real = tree.root + "/real-admin"
        try FileManager.default.moveItem(atPath: tree.admin, toPath: real)
        XCTAssertEqual(symlink(real, tree.admin), 0)
        let set = tree.load()
        XCTAssertTrue(set.files.contains { $0.path == tree.admin && $0.state.contains("symbolic link") }, "\(set.files.map(\.state))")
        XCTAssertNotNil(assertThrowsKeychainError(.notAvailable) { try set.decision(service: "s", account: "a") })
    }

    func test_corruptAdminFile_failsClosed_withFileLineColumn() throws {
        try tree.write(tree.vendor, "00.policy", "[default]\naccess = user-presence\n")
        let path = try tree.write(tree.admin, "20-broken.policy", "[service \"vpn*\"\naccess = none\n")
        let set = tree.load()
        let error = assertThrowsKeychainError(.notAvailable) { try set.decision(service: "mail", account: "a") }
        XCTAssertTrue(error?.message.contains("\(path):1:16: unterminated section header") ?? false, error?.message ?? "")
        XCTAssertNotNil(assertThrowsKeychainError(.notAvailable) { try set.keychainDecision() })
        XCTAssertEqual(set.problems.count, 1)
    }

    func test_oversizeAdminFile_isRefused() throws {
        let path = try tree.write(tree.admin, "big.policy", "[default]\n" + String(repeating: "#\n", count: 40_000))
        let state = tree.load().files.first { $0.path == path }?.state ?? ""
        XCTAssertTrue(state.contains("larger than 64 KiB"), state)
    }

    func test_brokenOrRefusedUserFile_isIgnoredWithAWarning_notFailClosed() throws {
        try tree.write(tree.vendor, "00.policy", "[default]\nmax-tries = 3\n")
        let broken = try tree.write(tree.user, "a.policy", "[default]\nmax-tries = many\n")
        let writable = try tree.write(tree.user, "b.policy", "[default]\nmax-tries = 1\n", mode: 0o666)
        let d = try decide("x")
        XCTAssertEqual(d.policy.maxTries, 3)
        XCTAssertTrue(d.warnings.contains { $0.contains("\(broken):2:13") }, "\(d.warnings)")
        XCTAssertTrue(d.warnings.contains { $0.contains("\(writable) is writable by others") }, "\(d.warnings)")
    }

    func test_nonPolicyAndHiddenFiles_areNotRead() throws {
        try tree.write(tree.admin, "README", "not a policy")
        try tree.write(tree.admin, ".hidden.policy", "[default]\nmax-tries = 1\n")
        try tree.write(tree.admin, "x.policy.dpkg-old", "[default]\nmax-tries = 1\n")
        let set = tree.load()
        XCTAssertEqual(set.files.filter { $0.layer == .admin }.count, 0)
        XCTAssertEqual(try set.decision(service: "s", account: "").policy.maxTries, 3)
    }

    func test_check_listsEveryErrorOfTheGivenFiles() throws {
        let good = try tree.write(tree.root, "good.policy", "[default]\nmax-tries = 2\n")
        let bad = try tree.write(tree.root, "bad.policy", "[default]\nmax-tries = 0\nfoo = 1\n")
        XCTAssertEqual(PolicySet.check(paths: [good]), [])
        let errors = PolicySet.check(paths: [good, bad, tree.root + "/missing.policy"])
        XCTAssertEqual(errors.count, 3, "\(errors)")
        XCTAssertTrue(errors[0].hasPrefix("\(bad):2:13: "))
        XCTAssertTrue(errors[1].hasPrefix("\(bad):3:1: unknown key"))
        XCTAssertTrue(errors[2].contains("missing.policy"))
    }

    func test_shippedPolicies_parseCleanly_andTheDefaultIsSudoLike() throws {
        let folder = PackagePaths.root + "/policies"
        let files = try FileManager.default.contentsOfDirectory(atPath: folder + "/examples").map { folder + "/examples/" + $0 }
        XCTAssertEqual(PolicySet.check(paths: [folder + "/00-default.policy"] + files), [])
        let text = try String(contentsOfFile: folder + "/00-default.policy", encoding: .utf8)
        let s = PolicyParser.parse(text, file: "00-default.policy").sections.first?.settings
        XCTAssertEqual(s?.defaultAccess, .userPresence, "keygate add's default")
        XCTAssertNil(s?.minimumAccess, "the vendor policy ships no floor")
        XCTAssertEqual(s?.reuseScope, .tty)
        XCTAssertEqual(s?.reuseDuration, 300)
        XCTAssertEqual(s?.lockAfter, 900)
    }

    // MARK: - stricter()

    func test_stricterAccess_nilGivesTheOther_andImplicationPicksTheStronger() {
        XCTAssertNil(AccessControl.stricter(nil, nil))
        XCTAssertEqual(AccessControl.stricter(nil, .userPresence), .userPresence)
        XCTAssertEqual(AccessControl.stricter(AccessControl(), .devicePasscode), .devicePasscode, "empty counts as none")
        XCTAssertEqual(AccessControl.stricter(.userPresence, .devicePasscode), .devicePasscode)
        XCTAssertEqual(AccessControl.stricter(.biometryCurrentSet, .userPresence), .biometryCurrentSet)
        XCTAssertEqual(AccessControl.stricter(.biometryAny, .biometryCurrentSet), .biometryCurrentSet)
        XCTAssertEqual(AccessControl.stricter([.devicePasscode, .biometryAny, .or], .devicePasscode), .devicePasscode,
                       "passcode alone already satisfies passcode-or-biometry")
    }

    func test_stricterAccess_combinesWithAnd_validByApplesRules() throws {
        let both = AccessControl.stricter(.devicePasscode, .biometryCurrentSet)
        XCTAssertEqual(both, [.devicePasscode, .biometryCurrentSet, .and])
        let withPresence = AccessControl.stricter(.userPresence, [.devicePasscode, .biometryAny, .or])
        XCTAssertEqual(withPresence, [.devicePasscode, .biometryAny, .or], "either constraint is an authentication")
        XCTAssertEqual(AccessControl.stricter([.devicePasscode, .biometryAny, .or], .biometryCurrentSet), .biometryCurrentSet,
                       "biometry-current-set is a narrower biometry, so it alone satisfies passcode-or-biometry")
        let mixed = AccessControl.stricter([.devicePasscode, .biometryCurrentSet, .or], .biometryAny)
        XCTAssertEqual(mixed, [.devicePasscode, .biometryCurrentSet, .and], "biometry-current-set subsumes biometry-any in the union")
        for a in sampleAccess { for b in sampleAccess {
            guard let c = AccessControl.stricter(a, b) else { continue }
            XCTAssertNoThrow(try c.validate(), "\(a.attributeValue) + \(b.attributeValue) -> \(c.attributeValue)")
            XCTAssertTrue(c.implies(a) && c.implies(b), "\(c.attributeValue) is at least as strict as both")
        } }
    }

    private var sampleAccess: [AccessControl] {
        [.userPresence, .devicePasscode, .biometryAny, .biometryCurrentSet,
         [.devicePasscode, .biometryAny, .or], [.devicePasscode, .biometryAny, .and],
         [.devicePasscode, .biometryCurrentSet, .or], [.devicePasscode, .biometryCurrentSet]]
    }

    func test_stricterAccessible_thisDeviceAndWhenUnlockedWin() {
        XCTAssertEqual(Accessibility.stricter(nil, .afterFirstUnlock), .afterFirstUnlock)
        XCTAssertEqual(Accessibility.stricter(.whenUnlocked, .afterFirstUnlock), .whenUnlocked)
        XCTAssertEqual(Accessibility.stricter(.afterFirstUnlockThisDeviceOnly, .whenUnlocked), .whenUnlockedThisDeviceOnly)
        XCTAssertEqual(Accessibility.stricter(.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly), .afterFirstUnlockThisDeviceOnly)
        XCTAssertEqual(Accessibility.stricter(.whenPasscodeSetThisDeviceOnly, .afterFirstUnlock), .whenPasscodeSetThisDeviceOnly)
    }
}
