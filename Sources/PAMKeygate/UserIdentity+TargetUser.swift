// The PAM module's way to act as the target user: UserIdentity
// (Sources/KeygateIdentity/System/UserIdentity.swift), given a TargetUser.
import KeygateCore
import KeygateIdentity

extension UserIdentity {
    /// Runs `body` as `user` and restores the caller's ids and groups, even when
    /// `body` throws. A process already running as `user` runs `body` unchanged.
    static func run<R>(as user: TargetUser, _ body: () throws -> R) throws -> R {
        try run(name: user.name, uid: user.uid, gid: user.gid, body)
    }

    /// As above, with the groups `groups(of:)` listed once for several runs.
    static func run<R>(as user: TargetUser, groups: [UInt32], _ body: () throws -> R) throws -> R {
        try run(name: user.name, uid: user.uid, gid: user.gid, groups: groups, body)
    }

    /// The groups `user` acts with inside `directory`: the primary group alone where it reaches
    /// the folder, else every group (UserIdentity.groups(toReach:)); listed once for several runs.
    static func groups(of user: TargetUser, toReach directory: String) throws -> [UInt32] {
        try groups(name: user.name, uid: user.uid, gid: user.gid, toReach: directory)
    }
}
