// Runs a piece of the module with the user's identity: the user's groups, and
// real, effective and file uid and gid, so that files in the home are read and
// written as the user would (root-squashed NFS, 0700 homes) and the kernel picks
// the user's keyring (@u follows the real uid) and charges the user's key quota.
// The saved ids stay root's, which is how the identity is put back afterwards, as
// pam_keyinit does. Delegates to setgroups(2), setresgid(2) and setresuid(2) (through CPAM's wrappers).
internal import CPAM
internal import Glibc

enum UserIdentity {
    /// Runs `body` as `user` and restores the caller's ids and groups, even when
    /// `body` throws. A process already running as `user` runs `body` unchanged.
    static func run<R>(as user: TargetUser, _ body: () throws -> R) throws -> R {
        let saved = try Credentials.current()
        if saved.ruid == user.uid && saved.euid == user.uid && saved.rgid == user.gid && saved.egid == user.gid {
            return try body()
        }
        guard saved.euid == 0 else {
            throw ModuleError("the module runs as uid \(saved.euid), not root, so it cannot act as \(user.name): the application must call PAM sessions as root")
        }
        let groups = try groupList(of: user)
        do {
            try check(setgroups(groups.count, groups), "setgroups")
            try check(keygate_setresgid(user.gid, user.gid, 0), "setresgid")
            try check(keygate_setresuid(user.uid, user.uid, 0), "setresuid")
        } catch {
            try saved.restore()
            throw error
        }
        let result: Result<R, any Error> = Result { try body() }
        try saved.restore()
        return try result.get()
    }

    /// The user's supplementary groups (getgrouplist(3)), primary group included.
    private static func groupList(of user: TargetUser) throws -> [gid_t] {
        var count: Int32 = 64
        for _ in 0..<4 {
            var groups = [gid_t](repeating: 0, count: Int(max(count, 1)))
            var found = count
            if getgrouplist(user.name, user.gid, &groups, &found) >= 0 {
                return Array(groups.prefix(Int(max(found, 0))))
            }
            guard found > count, found < 65_536 else { break }
            count = found
        }
        throw ModuleError("cannot list the groups of \(user.name) (getgrouplist): check NSS")
    }

    fileprivate static func check(_ rc: Int32, _ call: String) throws {
        guard rc == 0 else {
            throw ModuleError("\(call) failed: \(String(cString: strerror(errno)))")
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
        guard count >= 0 else { throw ModuleError("getgroups failed: \(String(cString: strerror(errno)))") }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let read = getgroups(count, &groups)
        guard read >= 0 else { throw ModuleError("getgroups failed: \(String(cString: strerror(errno)))") }
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
