// Waiting for input on several descriptors at once (poll(2)), for the gatekeeper's daemon,
// which waits for every caller at once (GateCallerQueue): which are readable, or that a signal
// interrupted the wait.
internal import Glibc

package enum Readiness {
    /// What one wait found.
    package enum Outcome: Equatable {
        /// For each descriptor, in order: whether it has input (or its other end closed).
        case ready([Bool])
        /// A signal arrived first: wait again.
        case interrupted
        case failed(SystemErrno)
    }

    /// Waits up to `milliseconds` (-1: no limit) for input on any of `descriptors`.
    package static func wait(forInput descriptors: [Int32], milliseconds: Int32) -> Outcome {
        var entries = descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let count = poll(&entries, nfds_t(entries.count), milliseconds)
        if count < 0 { return errno == EINTR ? .interrupted : .failed(.current) }
        return .ready(entries.map { $0.revents != 0 })
    }
}
