// Runs a piece of code with another user's identity: the user's groups, and real,
// effective and file uid and gid, so that files in the home are read and written as
// the user would (root-squashed NFS, 0700 homes) and the kernel picks the user's
// keyring (@u follows the real uid) and charges the user's key quota. The saved ids
// stay root's, which is how the identity is put back afterwards, as pam_keyinit does.
// And root's ids in full, for good, for the setuid gatekeeper. The one place ids change
// (SystemDoorTests), in a target only root's programs and the `keygate` CLI link, never the
// library apps link (LayeringTests). Used by pam_keygate's session hooks, root's
// host-protector commands (KeygateCLI) and the gatekeeper. Delegates to getgrouplist(3),
// setgroups(2), setresgid(2) and setresuid(2) (through CSystem's wrappers).
import KeygateCore
internal import CSystem
internal import Glibc

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
        try run(name: name, uid: uid, gid: gid, groups: nil, body)
    }

    /// As above, with the user's groups as `AccountEntry.groupList` listed them, so that a caller
    /// that acts as the same user several times in one short run (pam_keygate's helper at auth)
    /// asks NSS once. Nil: listed here.
    package static func run<R>(name: String, uid: UInt32, gid: UInt32, groups listed: [UInt32]?,
                               _ body: () throws -> R) throws -> R {
        let saved = try Credentials.current()
        if saved.ruid == uid && saved.euid == uid && saved.rgid == gid && saved.egid == gid {
            return try body()
        }
        guard saved.euid == 0 else {
            throw KeychainError.param("running as uid \(saved.euid), not root, so Keygate cannot act as \(name): run this as root")
        }
        let groups = try listed ?? AccountEntry.groupList(name: name, gid: gid)
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

    /// The groups to act as the user with, for work that stays inside `directory` (the user's
    /// own folder): the primary group alone when, with it alone, the user may search, read and
    /// write `directory` (or it is not there: no group makes it appear), which is every home
    /// whose path the user reaches without a supplementary group; else every group of the user
    /// from NSS (getgrouplist, whose first use in a process loads the NSS modules that
    /// /etc/nsswitch.conf names, systemd's among them: half a million instructions at each login).
    /// Fewer groups never reach more, and where the primary group is not enough the full list is
    /// used, so what the user's ids may do is never more than with every group.
    package static func groups(name: String, uid: UInt32, gid: UInt32, toReach directory: String) throws -> [UInt32] {
        let primary = [gid]
        let refusal = try run(name: name, uid: uid, gid: gid, groups: primary) {
            FileSystem.refusal([.readable, .writable, .executable], directory)
        }
        if refusal == nil || refusal == .noEntry { return primary }
        return try AccountEntry.groupList(name: name, gid: gid)
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
