// Runs a piece of code with another user's identity: the user's groups, and real,
// effective and file uid and gid, so that files in the home are read and written as
// the user would (root-squashed NFS, 0700 homes) and the kernel picks the user's
// keyring (@u follows the real uid) and charges the user's key quota. The saved ids
// stay root's, which is how the identity is put back afterwards, as pam_keyinit does.
// Used by pam_keygate's session hooks and by root's host-protector commands.
// Delegates to getpwnam_r(3), getgrouplist(3), setgroups(2), setresgid(2) and
// setresuid(2) (through CSystem's wrappers).
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
        try UserIdentity.groupList(name: name, gid: gid).compactMap { gid in
            var group = Glibc.group()
            var result: UnsafeMutablePointer<Glibc.group>?
            var buffer = [CChar](repeating: 0, count: 16 * 1024)
            guard getgrgid_r(gid, &group, &buffer, buffer.count, &result) == 0, result != nil,
                  let raw = group.gr_name else { return nil }
            return String(validatingCString: raw)
        }
    }
}

package enum UserIdentity {
    /// Root's ids in full, for good: real, effective and saved uid and gid 0, no supplementary
    /// groups (the setuid gatekeeper, once it has read its caller; the daemon it starts inherits
    /// them). The kernel lets a user signal a process whose real or saved uid is theirs, which a
    /// setuid program's is: from here on no signal of the user's reaches it, and the files it
    /// creates are root:root. True when taken, or when the process is not running as root at all
    /// (euid not 0: it stays as it is and fails on root's state instead). This file is the one
    /// place ids change (SystemDoorTests).
    package static func becomeRootInFull() -> Bool {
        guard geteuid() == 0 else { return true }
        return setgroups(0, nil) == 0 && keygate_setresgid(0, 0, 0) == 0 && keygate_setresuid(0, 0, 0) == 0
    }

    /// Runs `body` as the user (`uid`, `gid`, the groups of `name`) and restores the
    /// caller's ids and groups, even when `body` throws. A process already running as
    /// that user runs `body` unchanged. Only root can switch: anyone else gets `.param`.
    package static func run<R>(name: String, uid: UInt32, gid: UInt32, _ body: () throws -> R) throws -> R {
        let saved = try Credentials.current()
        if saved.ruid == uid && saved.euid == uid && saved.rgid == gid && saved.egid == gid {
            return try body()
        }
        guard saved.euid == 0 else {
            throw KeychainError.param("running as uid \(saved.euid), not root, so Keygate cannot act as \(name): run this as root")
        }
        let groups = try groupList(name: name, gid: gid)
        do {
            try check(setgroups(groups.count, groups), "setgroups")
            try check(keygate_setresgid(gid, gid, 0), "setresgid")
            try check(keygate_setresuid(uid, uid, 0), "setresuid")
        } catch {
            try saved.restore()
            throw error
        }
        let result: Result<R, any Error> = Result { try body() }
        try saved.restore()
        return try result.get()
    }

    /// The user's supplementary groups (getgrouplist(3)), primary group included.
    static func groupList(name: String, gid: UInt32) throws -> [gid_t] {
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

    fileprivate static func check(_ rc: Int32, _ call: String) throws {
        guard rc == 0 else {
            throw KeychainError.notAvailable("\(call) failed: \(String(cString: strerror(errno))); Keygate must run as root to act as another user")
        }
    }
}

/// The process's ids and groups, to put back after acting as the user.
private struct Credentials {
    var ruid: uid_t = 0, euid: uid_t = 0, suid: uid_t = 0
    var rgid: gid_t = 0, egid: gid_t = 0, sgid: gid_t = 0
    var groups: [gid_t] = []

    static func current() throws -> Credentials {
        var c = Credentials()
        try UserIdentity.check(keygate_getresuid(&c.ruid, &c.euid, &c.suid), "getresuid")
        try UserIdentity.check(keygate_getresgid(&c.rgid, &c.egid, &c.sgid), "getresgid")
        let count = getgroups(0, nil)
        guard count >= 0 else { throw KeychainError.notAvailable("getgroups failed: \(String(cString: strerror(errno)))") }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let read = getgroups(count, &groups)
        guard read >= 0 else { throw KeychainError.notAvailable("getgroups failed: \(String(cString: strerror(errno)))") }
        c.groups = Array(groups.prefix(Int(read)))
        return c
    }

    /// Root first (the saved uid allows it), then the original ids and groups.
    func restore() throws {
        try UserIdentity.check(keygate_setresuid(UInt32.max, 0, UInt32.max), "setresuid back to root")
        try UserIdentity.check(keygate_setresuid(ruid, euid, suid), "setresuid back")
        try UserIdentity.check(keygate_setresgid(rgid, egid, sgid), "setresgid back")
        try UserIdentity.check(setgroups(groups.count, groups), "setgroups back")
    }
}
