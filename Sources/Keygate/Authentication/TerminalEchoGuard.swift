// Turns terminal echo off for the length of one password read, and makes sure it
// comes back on: after the read, and also when SIGINT, SIGTERM, SIGHUP or SIGQUIT
// arrives while echo is off. The signal handler restores the saved termios (tcsetattr
// is async-signal-safe) and then lets the signal take its normal course. Delegates
// to termios(3) and sigaction(2) in Glibc.
internal import Glibc
import Synchronization

/// The C functions are `tcgetattr(3)`, `tcsetattr(3)` and `sigaction(2)`.
enum TerminalEchoGuard {
    /// One echo-off read at a time in this process: the saved state below is global.
    private static let lock = Mutex(())

    // State read by the signal handler. Written only with the handlers uninstalled
    // (or before they are installed), and every static is touched once before the
    // handlers go in, so the handler never runs a lazy initialiser.
    nonisolated(unsafe) private static var savedFD: Int32 = -1
    nonisolated(unsafe) private static var savedTermios = termios()
    nonisolated(unsafe) private static var caughtSignal: Int32 = 0
    nonisolated(unsafe) private static var oldINT = sigaction()
    nonisolated(unsafe) private static var oldTERM = sigaction()
    nonisolated(unsafe) private static var oldHUP = sigaction()
    nonisolated(unsafe) private static var oldQUIT = sigaction()
    /// Bit n set: signal n had the default action before we installed ours.
    nonisolated(unsafe) private static var defaultMask: UInt64 = 0
    /// Bit n set: our handler is installed for signal n.
    nonisolated(unsafe) private static var installedMask: UInt64 = 0

    private static let guardedSignals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    enum Outcome {
        /// The body finished; echo is back on.
        case finished
        /// A signal arrived while echo was off; echo is back on and the signal went to
        /// its previous handler (a default-action signal ends the process instead).
        case interrupted(Int32)
    }

    /// Runs `body` with echo off on `fd`, then restores the terminal exactly as it was.
    /// `body` sees `interrupted()` turn true when a guarded signal arrived (read(2)
    /// then fails with EINTR). Throws when `fd` is not a terminal whose echo can be
    /// switched off: a password is never read with echo on.
    static func withEchoOff<R>(fd: Int32, _ body: (_ interrupted: () -> Bool) throws -> R) throws -> (R, Outcome) {
        try lock.withLock { _ in
            var original = termios()
            guard tcgetattr(fd, &original) == 0 else {
                throw KeychainError.interactionNotAllowed(
                    "cannot read the terminal settings (\(errnoText())), so the password cannot be hidden: run from a terminal or set KEYGATE_ASKPASS")
            }
            savedTermios = original
            savedFD = fd
            caughtSignal = 0
            installHandlers()

            var quiet = original
            quiet.c_lflag &= ~tcflag_t(ECHO | ECHONL)
            if tcsetattr(fd, TCSAFLUSH, &quiet) != 0 {
                let reason = errnoText()
                restore()
                throw KeychainError.interactionNotAllowed(
                    "cannot turn off echo on the terminal (\(reason)), so the password cannot be hidden: run in the foreground, or set KEYGATE_ASKPASS")
            }

            let result: R
            do {
                result = try body { caughtSignal != 0 }
            } catch {
                restore()
                throw error
            }
            let signal = restore()
            return (result, signal == 0 ? .finished : .interrupted(signal))
        }
    }

    /// Puts the terminal and the signal handlers back. When a guarded signal arrived,
    /// hands it to the previous handler now. Returns that signal, or 0.
    @discardableResult
    private static func restore() -> Int32 {
        var original = savedTermios
        _ = tcsetattr(savedFD, TCSAFLUSH, &original)
        uninstallHandlers()
        savedFD = -1
        let signal = caughtSignal
        caughtSignal = 0
        if signal != 0 { raise(signal) }
        return signal
    }

    private static func bit(_ signal: Int32) -> UInt64 { signal > 0 && signal < 64 ? UInt64(1) << UInt64(signal) : 0 }

    private static func installHandlers() {
        defaultMask = 0
        installedMask = 0
        var ours = sigaction()
        ours.__sigaction_handler.sa_handler = restoreTerminalOnSignal
        sigemptyset(&ours.sa_mask)
        for signal in guardedSignals { sigaddset(&ours.sa_mask, signal) }
        ours.sa_flags = 0  // no SA_RESTART: the blocked read(2) returns EINTR
        for signal in guardedSignals {
            var old = sigaction()
            guard sigaction(signal, nil, &old) == 0 else { continue }
            if isIgnored(old) { continue }  // an ignored signal cannot interrupt us
            store(old, for: signal)
            if old.__sigaction_handler.sa_handler == nil && (old.sa_flags & SA_SIGINFO) == 0 {
                defaultMask |= bit(signal)
            }
            if sigaction(signal, &ours, nil) == 0 { installedMask |= bit(signal) }
        }
    }

    private static func uninstallHandlers() {
        for signal in guardedSignals where installedMask & bit(signal) != 0 {
            var old = storedAction(for: signal)
            _ = sigaction(signal, &old, nil)
        }
        installedMask = 0
        defaultMask = 0
    }

    private static func isIgnored(_ action: sigaction) -> Bool {
        guard (action.sa_flags & SA_SIGINFO) == 0, let handler = action.__sigaction_handler.sa_handler else { return false }
        return unsafeBitCast(handler, to: Int.self) == 1  // SIG_IGN is ((__sighandler_t) 1)
    }

    private static func store(_ action: sigaction, for signal: Int32) {
        switch signal {
        case SIGINT: oldINT = action
        case SIGTERM: oldTERM = action
        case SIGHUP: oldHUP = action
        default: oldQUIT = action
        }
    }

    private static func storedAction(for signal: Int32) -> sigaction {
        switch signal {
        case SIGINT: return oldINT
        case SIGTERM: return oldTERM
        case SIGHUP: return oldHUP
        default: return oldQUIT
        }
    }

    /// The handler: async-signal-safe calls only (tcsetattr, sigaction, raise, _exit).
    private static let restoreTerminalOnSignal: @convention(c) (Int32) -> Void = { signal in
        if savedFD >= 0 {
            var original = savedTermios
            _ = tcsetattr(savedFD, TCSAFLUSH, &original)
        }
        caughtSignal = signal
        if defaultMask & bit(signal) != 0 {
            // The signal would have ended the process: let it, with the terminal fixed.
            var dfl = sigaction()
            sigemptyset(&dfl.sa_mask)
            dfl.__sigaction_handler.sa_handler = nil  // SIG_DFL
            if sigaction(signal, &dfl, nil) == 0 {
                // Blocked while this handler runs; delivered with the default action on return.
                raise(signal)
                return
            }
            _exit(128 + signal)
        }
        // Otherwise the program has its own handler: restore() passes the signal on
        // once the read has returned with EINTR.
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}
