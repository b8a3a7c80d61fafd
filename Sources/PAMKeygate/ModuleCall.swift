// One call into the helper: the module's request, the parsed options, the log, the flags and
// the call's deadline, and the one place where every entry point becomes a total
// function: any error (a timeout included) is logged and turned into PAM_IGNORE, so
// Keygate never breaks or decides a login. The deadline is a total budget for the call:
// 2 s beyond root's calibrated Argon2id time; every lock the call waits for gives up then.
internal import CPAM
import KeygateCore

struct ModuleCall {
    let handle: ModuleHandle
    let options: ModuleOptions
    let log: ModuleLog
    let flags: Int32
    /// CLOCK_MONOTONIC nanoseconds at which this call stops waiting for anything.
    let deadline: UInt64
    /// The helper's environment, read once by its main (KeygateEnvironment) and passed down.
    let environment: KeygateEnvironment
    /// Root's kept Argon2id calibration (KDFCeiling.read), read once for the deadline; nil
    /// when this boot has none yet (auth then calibrates, KDFCeiling.current).
    let ceiling: KDFCeiling?

    /// Time for everything but the derivation itself (locks, files, the keyring).
    static let waitBudgetNanoseconds: UInt64 = 2_000_000_000
    /// The derivation's share when root has not calibrated yet (calibrating takes about as long).
    static let uncalibratedKDFNanoseconds: UInt64 = 1_000_000_000

    /// Parses the options, logs the ones not understood, runs `body`, and turns any
    /// error into a log line and PAM_IGNORE.
    static func run(_ handle: ModuleHandle, environment: KeygateEnvironment, _ body: (ModuleCall) throws -> Int32) -> Int32 {
        let options = ModuleOptions(arguments: handle.arguments.filter { !$0.hasPrefix(ModuleOptions.helperPrefix) })
        let log = ModuleLog(debugEnabled: options.debug, environment: environment)
        for problem in options.problems { log.warning(problem) }
        let ceiling = KDFCeiling.read()
        let kdf = ceiling.map { $0.milliseconds * 1_000_000 } ?? uncalibratedKDFNanoseconds
        let deadline = FileLock.monotonicNow() + waitBudgetNanoseconds + kdf
        let call = ModuleCall(handle: handle, options: options, log: log, flags: handle.flags, deadline: deadline,
                              environment: environment, ceiling: ceiling)
        FileLock.waitDeadline = deadline
        defer { FileLock.waitDeadline = nil }
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
        LoginKeys.dataDirectory(home: user.home)
    }

    /// How long an unlock at login lasts: lock_after=, else the system policy's lock-after
    /// (vendor and admin files; never the user's own), else the built-in default.
    func lockAfter(for user: TargetUser) -> UInt32 {
        if let seconds = options.lockAfter { return seconds }
        do {
            return try LoginPolicy.lockAfter(home: user.home, environment: environment)
        } catch {
            log.warning("""
                the system policy cannot be read (\(error)): the built-in lock-after of \(Policy.default.lockAfter) s applies; \
                check it with `keygate policy check`
                """)
            return Policy.default.lockAfter
        }
    }
}
