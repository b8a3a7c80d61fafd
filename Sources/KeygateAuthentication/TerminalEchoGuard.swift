// Turns terminal echo off for the length of one password read, and makes sure it
// comes back on: after the read, and when SIGINT, SIGTERM, SIGHUP, SIGQUIT or a
// job-control stop (Ctrl-Z, SIGTTIN, SIGTTOU) arrives while echo is off. The state and
// the signal handler are C's (CSystem/terminal.h): a Swift global of an imported C
// struct can be laid out smaller than C's, and sigaction(2) then overwrites the next
// global in a release build (terminal.h says how). Delegates to termios(3), sigaction(2)
// and poll(2) through that header; this is the header's only Swift caller.
import KeygateCore
internal import CSystem
internal import Glibc
import Synchronization

/// The C functions are `keygate_tty_begin`, `keygate_tty_read_byte` and `keygate_tty_end`
/// (CSystem/terminal.h).
enum TerminalEchoGuard {
    /// One echo-off read at a time in this process: the saved state is process-wide.
    private static let lock = Mutex(())

    /// Reads one byte into the pointer: 1, 0 at end of file, -1 with errno, or
    /// `interruptedBySignal` when a guarded signal arrived.
    typealias ReadByte = (UnsafeMutablePointer<UInt8>) -> Int
    static let interruptedBySignal = -2

    /// Runs `body` with echo off on `fd`, then restores the terminal and the signal
    /// actions exactly as they were. Returns the body's result, or nil when a guarded
    /// signal arrived first, with that signal (0 when none) for `passOn`. Throws when
    /// `fd` is not a terminal whose echo can be switched off: a password is never read
    /// with echo on.
    static func withEchoOff<R>(fd: Int32, _ body: (_ readByte: ReadByte) throws -> R) throws -> (R?, Int32) {
        try lock.withLock { _ in
            if keygate_tty_begin(fd) != 0 {
                let reason = errnoText()
                let signal = keygate_tty_end()
                if signal != 0 { return (nil, signal) }  // e.g. SIGTTOU: we are in the background
                throw KeychainError.interactionNotAllowed(
                    """
                        cannot turn off echo on the terminal (\(reason)), so the password cannot be hidden: run in the foreground, or set \
                        KEYGATE_ASKPASS
                        """)
            }
            let result: R
            do {
                result = try body { pointer in Int(keygate_tty_read_byte(pointer)) }
            } catch {
                _ = keygate_tty_end()
                throw error
            }
            let signal = keygate_tty_end()
            return (signal == 0 ? result : nil, signal)
        }
    }

    /// What happened after a guarded signal was passed on.
    enum AfterSignal {
        /// A stop: the process was stopped and is running again (`fg`): ask again.
        case resumed
        /// The read is over without an answer: Ctrl-C, or a signal the program handles itself.
        case canceled
    }

    /// Hands `signal` to the action that was in place before the prompt, now that the
    /// terminal is restored. A stop stops the process (sudo does the same), and returns
    /// once it continues. Ctrl-C with the default action is the person's cancel: the
    /// caller reports errSecUserCanceled rather than dying. Other signals with their default
    /// action end the process, with the terminal already sane.
    static func passOn(_ signal: Int32) -> AfterSignal {
        if keygate_tty_is_stop(signal) != 0 {
            raise(signal)
            return .resumed
        }
        if signal == SIGINT && keygate_signal_is_default(signal) != 0 { return .canceled }
        raise(signal)
        return .canceled
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}
