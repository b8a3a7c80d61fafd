// A signal set to be ignored for a while and then given back its previous disposition
// (signal(2) with SIG_IGN, then the handler it returned): SIGPIPE while writing to a child
// or a daemon that may have gone (a write error instead of the end of this process), SIGINT
// and SIGQUIT while `keygate exec` waits for its command, as a shell does. `ignore` alone is
// for a process that ignores a signal for the rest of its life (the gatekeeper).
internal import Glibc

/// The signals Keygate ignores or resets in a child (Spawn.defaultSignals), by name.
package enum SignalName: Sendable {
    case brokenPipe, interrupt, quit, fileSizeExceeded

    /// SIGPIPE, SIGINT, SIGQUIT, SIGXFSZ.
    package var number: Int32 {
        switch self {
        case .brokenPipe: SIGPIPE
        case .interrupt: SIGINT
        case .quit: SIGQUIT
        case .fileSizeExceeded: SIGXFSZ
        }
    }
}

package struct IgnoredSignal {
    package typealias Name = SignalName

    private let number: Int32
    private let previous: __sighandler_t?

    /// Ignores `name` until `restore()`.
    package init(_ name: Name) {
        number = name.number
        previous = signal(name.number, SIG_IGN)
    }

    /// Gives the signal back the disposition it had before.
    package func restore() {
        _ = signal(number, previous)
    }

    /// Ignores `name` from now on.
    package static func ignore(_ name: Name) {
        _ = signal(name.number, SIG_IGN)
    }
}
