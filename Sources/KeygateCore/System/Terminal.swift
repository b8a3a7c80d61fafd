// Whether a descriptor is a terminal and which one (isatty(3), ttyname(3)), and the
// controlling terminal's path, and discarding what was typed ahead (CSystem's
// keygate_tty_discard_typeahead: FIONREAD, tcflush). Turning echo off is C's too
// (CSystem/terminal.h, through KeygateAuthentication's TerminalEchoGuard); opening /dev/tty is
// SafeFile.open's.
internal import CSystem
internal import Glibc

package enum Terminal {
    /// The controlling terminal, whoever it is.
    package static let controllingPath = "/dev/tty"

    package static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// Discards the input waiting on the terminal `fd`: how many bytes were discarded (0 when
    /// none, negative when it could not look).
    package static func discardTypeAhead(_ fd: Int32) -> Int32 {
        keygate_tty_discard_typeahead(fd)
    }

    /// ttyname(3): the terminal device open on `fd`, or nil when it is no terminal.
    package static func name(of fd: Int32) -> String? {
        guard let name = ttyname(fd) else { return nil }
        return String(cString: name)
    }
}
