// After a refused authentication (a lockout refuses without prompting; three wrong
// passwords end the prompt), what the person typed ahead is still in the terminal's
// input, and the shell would read it next: a password would run as a command and show
// on the screen. Keygate discards it, as sudo flushes the terminal before it asks, and
// says so. Delegates to KeygateCore/System's Terminal.discardTypeAhead (FIONREAD, tcflush).

import Keygate

enum TypeAhead {
    /// Discards pending terminal input after `error`, when it refused an authentication.
    static func discard(after error: KeychainError) {
        guard error.code == .authFailed else { return }
        let fd = SafeFile.open("/dev/tty", .readWrite | .noControllingTerminal | .nonBlocking, links: .follow)
        guard fd >= 0 else { return }
        defer { Descriptor.close(fd) }
        let discarded = Terminal.discardTypeAhead(fd)
        if discarded > 0 {
            Console.err("keygate: discarded what was typed ahead (\(discarded) byte\(discarded == 1 ? "" : "s")), so that it does "
                        + "not reach your shell\n")
        }
    }
}
