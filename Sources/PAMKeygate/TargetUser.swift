// The account a PAM call is about, from the password database by name (getpwnam_r):
// its uid, primary group and home, never from the environment of the program that
// loaded the module.
internal import Glibc

struct TargetUser: Sendable, Equatable {
    let name: String
    let uid: UInt32
    let gid: UInt32
    let home: String

    static func lookup(name: String) throws(ModuleError) -> TargetUser {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let rc = getpwnam_r(name, &entry, &buffer, buffer.count, &result)
        guard rc == 0, result != nil, let dir = entry.pw_dir, let home = String(validatingCString: dir) else {
            throw ModuleError("user '\(name)' has no entry in the password database (getpwnam_r: \(rc)): nothing to unlock")
        }
        return TargetUser(name: name, uid: entry.pw_uid, gid: entry.pw_gid, home: home)
    }
}

/// An internal failure, said in words for the log. Never carries a secret.
struct ModuleError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
