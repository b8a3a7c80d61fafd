// auth: with the password an earlier module (pam_unix) took, unwraps the master key
// as the user and caches it in the user's kernel keyring with the lock-after timeout
// (LoginKeys, shared with the CLI); then, as root, the gatekeeper's seals on the class
// keys. The unlock happens here, in the process that saw the password, because sshd's
// keyboard-interactive authentication runs PAM auth in another process than the session:
// nothing kept at auth would reach open_session. The user keyring outlives both. The
// session hooks only count sessions (and lock at the last close). No device key is
// handed over: this-device-only items open through keygate-gatekeeper
// (docs/GATEKEEPER.md). Never decides the login: always PAM_IGNORE. A wrong password
// (pam_unix failed first in a `required` line) unwraps nothing and leaves it locked.
internal import CPAM
import KeygateCore
import KeygateGatekeeper
import KeygateIdentity

enum Authenticate {
    static func run(_ call: ModuleCall) throws -> Int32 {
        guard let user = try call.eligibleUser() else { return PAM_IGNORE }
        guard let password = try call.handle.password(PAM_AUTHTOK) else {
            call.log.debug("no password was typed for \(user.name) before this module (put it after pam_unix): nothing to unlock with")
            return PAM_IGNORE
        }
        let directory = call.dataDirectory(of: user)
        // The groups for the three runs as the user below, chosen once: the primary group alone
        // where it reaches the data folder, else every group from NSS.
        let groups = try UserIdentity.groups(of: user, toReach: directory)
        call.log.debug("acting as \(user.name) with \(groups == [user.gid] ? "its primary group only" : "its \(groups.count) groups")")
        // login.json is read once: root checks the cost it records, and the unlock derives with
        // exactly that cost (a file swapped after the check is not read).
        let login = try UserIdentity.run(as: user, groups: groups) { () throws -> LoginKeys.LoginProtector?? in
            guard LoginKeys.isInitialized(dataDirectory: directory) else { return .none }
            return .some(try LoginKeys.readLogin(dataDirectory: directory))
        }
        guard let login else {
            call.log.debug("\(user.name) has no keychain in \(directory): nothing to unlock")
            return PAM_IGNORE
        }
        // Without a login protector (a recovery key only) the unlock below says what to run.
        if let login, let why = try (call.ceiling ?? KDFCeiling.current()).refusal(passes: login.passes,
                                                                                    memoryBytes: login.memoryBytes) {
            call.log.error("\(user.name): \(why)")
            return PAM_IGNORE
        }
        let lockAfter = call.lockAfter(for: user)
        // Every class pair is derived once, here, for the cache, root's seals and keys.json.
        let (master, pairs) = try withExtendedLifetime(password) {
            try UserIdentity.run(as: user, groups: groups) {
                try LoginKeys.unlockAtLogin(password: password, login: login, dataDirectory: directory, uid: user.uid,
                                            lockAfter: lockAfter)
            }
        }
        // As root: the gatekeeper's seals on the class keys, so that gated adds need no prompt.
        var seals: [Accessibility: [UInt8]] = [:]
        do {
            seals = try GateSecrets.seals(publicKeys: pairs.mapValues(\.publicKey), uid: user.uid, userName: user.name,
                                          environment: call.environment)
        } catch {
            call.log.warning("""
                could not seal the keychain's class keys for \(user.name): \(error); the first item with access control asks for \
                the password once
                """)
        }
        // As the user: keys.json records the public keys (with the seals when there are any);
        // at every login after the first it already does, and is not written.
        do {
            try UserIdentity.run(as: user, groups: groups) {
                try LoginKeys.recordClassKeys(master: master, pairs: pairs, seals: seals, dataDirectory: directory)
            }
        } catch {
            call.log.warning("could not record the keychain's class keys for \(user.name) in \(directory): \(error)")
        }
        call.log.notice("unlocked the keychain of \(user.name) for \(lockAfter) s")
        // For the module: open_session in this transaction need not look in the keyring (UnlockedAtAuth).
        HelperOutput.write("unlocked \(user.uid)")
        return PAM_IGNORE
    }
}
