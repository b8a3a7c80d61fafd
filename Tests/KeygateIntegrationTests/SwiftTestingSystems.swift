// What a Swift Testing test needs to run real systems as the XCTest classes do: a missing
// system cancels it locally and fails it under CI (Requirement), and the children it starts
// see no blocked signal (docs/DECISIONS.md, "One list, one matrix, one declaration").
import Foundation
import KeygateTestSupport
import Testing
import XCTest

/// A missing system: under CI a failure (Requirement), locally the test is cancelled, as
/// XCTest skips (an XCTSkip thrown in a Swift Testing test would fail it).
func skippingWhenMissing<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let skip as XCTSkip {
        try Test.cancel(Comment(rawValue: "\(skip)"))
    }
}

/// `body` with no signal blocked on this thread, as on XCTest's main thread. Swift Testing runs
/// a test on a worker thread that blocks most signals (SIGTERM among them), and a child started
/// from it (Foundation's Process) inherits that mask: scripts/provider-session's kwalletd5 then
/// never ends on the TERM its start sends, and the start hangs. The mask is put back after.
func withUnblockedSignals<T>(_ body: () throws -> T) rethrows -> T {
    var none = sigset_t()
    var saved = sigset_t()
    sigemptyset(&none)
    pthread_sigmask(SIG_SETMASK, &none, &saved)
    defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
    return try body()
}
