// A local account by name, from the password database (getpwnam_r(3)), never from the
// environment: who root acts as (KeygateIdentity's UserIdentity) and whom the host
// protector's policy names (HostProtectorPolicy).
internal import CSystem
internal import Glibc

/// A local account by name, from the password database (never from the environment).
package struct AccountEntry: Sendable, Equatable {
    package let name: String
    package let uid: UInt32
    package let gid: UInt32
    package let home: String

    package init(name: String, uid: UInt32, gid: UInt32, home: String) {
        self.name = name
        self.uid = uid
        self.gid = gid
        self.home = home
    }

    /// The account called `name`; `.param` when there is none.
    package static func lookup(name: String) throws -> AccountEntry {
        switch find(name: name) {
        case .success(let entry): return entry
        case .failure(let failure):
            throw KeychainError.param("""
                there is no user '\(name)' in the password database (getpwnam_r: \(failure.code)): check the name (getent passwd \(name))
                """)
        }
    }

    /// Why an account was not found: getpwnam_r's return code (0 when there is simply no such
    /// entry, or its home is not valid UTF-8).
    package struct NotFound: Error, Equatable {
        package let code: Int32
    }

    /// The account called `name` (getpwnam_r(3)), or getpwnam_r's code.
    package static func find(name: String) -> Result<AccountEntry, NotFound> {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let rc = getpwnam_r(name, &entry, &buffer, buffer.count, &result)
        guard rc == 0, result != nil, let dir = entry.pw_dir, let home = String(validatingCString: dir) else {
            return .failure(NotFound(code: rc))
        }
        return .success(AccountEntry(name: name, uid: entry.pw_uid, gid: entry.pw_gid, home: home))
    }

    /// The names of the groups the account is in (primary group included). Groups
    /// without a name are skipped.
    package func groupNames() throws -> [String] {
        try Self.groupList(name: name, gid: gid).compactMap { gid in
            var group = Glibc.group()
            var result: UnsafeMutablePointer<Glibc.group>?
            var buffer = [CChar](repeating: 0, count: 16 * 1024)
            guard getgrgid_r(gid, &group, &buffer, buffer.count, &result) == 0, result != nil,
                  let raw = group.gr_name else { return nil }
            return String(validatingCString: raw)
        }
    }
}

extension AccountEntry {
    /// The user's supplementary groups (getgrouplist(3)), primary group included.
    package static func groupList(name: String, gid: UInt32) throws -> [UInt32] {
        var count: Int32 = 64
        for _ in 0..<4 {
            var groups = [gid_t](repeating: 0, count: Int(max(count, 1)))
            var found = count
            if getgrouplist(name, gid, &groups, &found) >= 0 {
                return Array(groups.prefix(Int(max(found, 0))))
            }
            guard found > count, found < 65_536 else { break }
            count = found
        }
        throw KeychainError.notAvailable("cannot list the groups of \(name) (getgrouplist): check NSS (getent group)")
    }
}
