// One call into the module: the PAM handle, the parsed options, the log and the
// flags, and the one place where every entry point becomes a total function: any
// error is logged and turned into PAM_IGNORE, so Keygate never breaks a login.
internal import CPAM
#if !KEYGATE_PAM_STANDALONE
import Keygate
#endif

struct ModuleCall {
    let handle: ModuleHandle
    let options: ModuleOptions
    let log: ModuleLog
    let flags: Int32

    /// Parses the options, logs the ones not understood, runs `body`, and turns any
    /// error into a log line and PAM_IGNORE.
    static func run(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                    _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                    _ body: (ModuleCall) throws -> Int32) -> Int32 {
        guard let pamh else { return PAM_IGNORE }
        let options = ModuleOptions.from(argc: argc, argv: argv)
        let log = ModuleLog(handle: pamh, debugEnabled: options.debug)
        for problem in options.problems { log.warning(problem) }
        let call = ModuleCall(handle: ModuleHandle(raw: pamh), options: options, log: log, flags: flags)
        do {
            return try body(call)
        } catch {
            log.error("\(error) (the login goes on without Keygate)")
            return PAM_IGNORE
        }
    }

    /// The user this call is about, or nil (logged under debug) when the module should
    /// leave it alone: no PAM_USER, or a system account below min_uid.
    func eligibleUser() throws -> TargetUser? {
        guard let name = handle.user(), !name.isEmpty else {
            log.debug("no user is set on this PAM handle: nothing to do")
            return nil
        }
        let user = try TargetUser.lookup(name: name)
        guard user.uid >= options.minUID else {
            log.debug("\(name) has uid \(user.uid), below min_uid=\(options.minUID): left alone")
            return nil
        }
        return user
    }

    /// The user's Keygate data folder (protectors), from the password database's home.
    func dataDirectory(of user: TargetUser) -> String {
        LoginKeys.dataDirectory(uid: user.uid, name: user.name, home: user.home)
    }

    /// How long an unlock at login lasts: lock_after=, else the policy's.
    var lockAfter: UInt32 { options.lockAfter ?? Policy.default.lockAfter }
}
