// The account a PAM call is about, from the password database by name (getpwnam_r):
// its uid, primary group and home, never from the environment of the program that
// loaded the module. The lookup is KeygateCore/System's (AccountEntry.find).
import KeygateCore

struct TargetUser: Sendable, Equatable {
    let name: String
    let uid: UInt32
    let gid: UInt32
    let home: String

    static func lookup(name: String) throws(ModuleError) -> TargetUser {
        switch AccountEntry.find(name: name) {
        case .success(let entry):
            return TargetUser(name: name, uid: entry.uid, gid: entry.gid, home: entry.home)
        case .failure(let failure):
            throw ModuleError("user '\(name)' has no entry in the password database (getpwnam_r: \(failure.code)): nothing to unlock")
        }
    }
}

/// An internal failure, said in words for the log. Never carries a secret.
struct ModuleError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
