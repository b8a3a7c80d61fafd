// What a login (pam_keygate.so) takes from the policy: the keychain-wide lock-after of
// the system files only (vendor and admin folders, root's decision). A user's own file
// may tighten lock-after for the CLI, but a login runs as root for the user and reads no
// file the user writes. An unusable system file is an error for the caller to log.
package enum LoginPolicy {
    /// The keychain-wide lock-after of the system policy files, in seconds.
    package static func lockAfter(home: String, environment: KeygateEnvironment) throws -> UInt32 {
        let system = PolicyLocations.folders(home: home, environment: environment).filter { $0.0.isSystem }
        return try PolicySet.load(folders: system, uid: 0).keychainDecision().policy.lockAfter
    }
}
