// Whether a descriptor is a terminal and which one (isatty(3), ttyname(3)), and the
// controlling terminal's path. Turning echo off is C's (CSystem/terminal.h, through
// KeygateAuthentication's TerminalEchoGuard); opening /dev/tty is SafeFile.open's.
internal import Glibc

package enum Terminal {
    /// The controlling terminal, whoever it is.
    package static let controllingPath = "/dev/tty"

    /// isatty(3).
    package static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// ttyname(3): the terminal device open on `fd`, or nil when it is no terminal.
    package static func name(of fd: Int32) -> String? {
        guard let name = ttyname(fd) else { return nil }
        return String(cString: name)
    }
}
