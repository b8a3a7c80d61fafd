// The calling user, from the kernel's real uid and the password database
// (getpwuid_r), never from $USER, which any process can set.
internal import Glibc

public struct UserAccount: Sendable, Equatable {
    public let uid: UInt32
    public let name: String
    public let home: String

    package init(uid: UInt32, name: String, home: String) {
        self.uid = uid
        self.name = name
        self.home = home
    }

    /// The user this process runs as (real uid).
    public static func current() throws -> UserAccount {
        try lookup(uid: getuid())
    }

    public static func lookup(uid: UInt32) throws -> UserAccount {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let rc = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
        guard rc == 0, result != nil, let namePtr = entry.pw_name else {
            throw KeychainError.notAvailable("""
                uid \(uid) has no entry in the password database: Keygate needs a named user account (check /etc/passwd or NSS)
                """)
        }
        let name = String(cString: namePtr)
        let home = entry.pw_dir.map { String(cString: $0) } ?? "/"
        return UserAccount(uid: uid, name: name, home: home)
    }
}
