// Where Keygate keeps its per-user files: the master key's protectors live under
// $XDG_DATA_HOME/keygate (default ~/.local/share/keygate). Items live in the Secret
// Service, or in the embedded store (items.sqlite) in this same folder.
internal import Glibc

package enum KeygatePaths {
    /// The per-user data folder. HOME comes from the environment when set (so that
    /// tests and `sudo -H` behave as expected), else from the password database.
    package static func dataDirectory(for user: UserAccount, environment: [String: String]) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return xdg + "/keygate"
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? user.home
        return home + "/.local/share/keygate"
    }
}
