// What the gatekeeper's daemon keeps between requests besides parsed policy files: each
// user's password-database entry and gate secrets, each only while the files they were
// read from keep their FileVersion (/etc/passwd; the secret, the generation file and
// /etc/shadow), with the presence pairs derived from the secrets (GateSecrets.DerivedPairs).
// A password change rewrites /etc/shadow, so the next request loads the secrets again and
// moves the generation, as the helper would. Root's records are kept apart
// (GateRecordsCache), checked against their file under its lock at every request, so
// `keygate lock`, a lockout and a new authentication count at once. The daemon is
// single-threaded; this is its alone.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

final class GateDaemonCache {
    private var users: [UInt32: (version: FileVersion?, account: UserAccount)] = [:]
    private var secrets: [UInt32: (versions: [FileVersion?], name: String, secrets: GateSecrets)] = [:]
    /// At most this many users are kept; beyond it the cache starts again.
    static let capacity = 4096

    func user(uid: UInt32) throws -> UserAccount {
        let version = FileVersion(path: "/etc/passwd")
        if let known = users[uid], version != nil, known.version == version { return known.account }
        let account = try UserAccount.lookup(uid: uid)
        if users.count >= Self.capacity { users.removeAll() }
        users[uid] = (version, account)
        return account
    }

    func secrets(uid: UInt32, userName: String, environment: KeygateEnvironment) throws -> GateSecrets {
        let versions = Self.secretVersions(uid: uid, environment)
        if let known = secrets[uid], !versions.contains(nil), known.versions == versions, known.name == userName {
            return known.secrets
        }
        var loaded = try GateSecrets.load(uid: uid, userName: userName, environment: environment)
        loaded.keepDerivedPairs()
        if secrets.count >= Self.capacity { secrets.removeAll() }
        // Read after the load: it may have written the generation file.
        secrets[uid] = (Self.secretVersions(uid: uid, environment), userName, loaded)
        return loaded
    }

    private static func secretVersions(uid: UInt32, _ environment: KeygateEnvironment) -> [FileVersion?] {
        let folder = GatekeeperPaths.stateDirectory(uid: uid, environment)
        return [FileVersion(path: folder + "/secret"), FileVersion(path: folder + "/generation"), FileVersion(path: "/etc/shadow")]
    }
}
