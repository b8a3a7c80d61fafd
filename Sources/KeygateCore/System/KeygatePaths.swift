// Where Keygate keeps its per-user files: the master key's protectors live under
// $XDG_DATA_HOME/keygate (default ~/.local/share/keygate). Items live in the Secret
// Service, or in the embedded store (items.sqlite) in this same folder.
internal import Glibc

package enum KeygatePaths {
    /// The calling user's home: HOME from the environment when it is absolute (so that
    /// tests and `sudo -H` behave as expected), else the password database's. The database
    /// is read only in that second case: a read with HOME set does not need it.
    package static func home(environment: KeygateEnvironment, uid: UInt32) throws -> String {
        if let home = environment.home, home.hasPrefix("/") { return home }
        guard let account = try? UserAccount.lookup(uid: uid) else {
            throw KeychainError.notAvailable("""
                uid \(uid) has no entry in the password database and HOME is not an absolute path, so Keygate \
                cannot tell where its files are: set HOME, or add the account (/etc/passwd or NSS)
                """)
        }
        return account.home
    }

    /// The per-user data folder under `home`, or under $XDG_DATA_HOME when it is absolute.
    package static func dataDirectory(home: String, environment: KeygateEnvironment) -> String {
        if let xdg = environment.dataHome, xdg.hasPrefix("/") {
            return xdg + "/keygate"
        }
        return home + "/.local/share/keygate"
    }
}
