// A deadline for one storage operation: a GCancellable that every libsecret call of the
// operation receives, cancelled by a Dispatch timer when the time is up. A Secret Service
// that does not answer (a stopped daemon) then fails with G_IO_ERROR_CANCELLED instead of
// hanging. The mapping of that error to a message lives in SecretServiceFailure.
internal import CSecret
import Dispatch

final class ServiceDeadline {
    let limit: Duration
    let cancellable: UnsafeMutablePointer<GCancellable>
    private let timer: DispatchWorkItem
    private let box: CancellableBox

    /// Holds its own reference to the cancellable, so a timer that fires late never touches freed memory.
    private final class CancellableBox: @unchecked Sendable {
        // @unchecked: g_cancellable_cancel is thread-safe; the pointer never changes.
        let pointer: UnsafeMutablePointer<GCancellable>
        init(_ pointer: UnsafeMutablePointer<GCancellable>) {
            self.pointer = pointer
            g_object_ref(pointer)
        }
        func cancel() { g_cancellable_cancel(pointer) }
        deinit { g_object_unref(pointer) }
    }

    /// Starts the clock.
    init(_ limit: Duration) throws {
        guard let cancellable = g_cancellable_new() else {
            throw KeychainError.notAvailable("could not allocate memory for a Secret Service call: free some memory, then try again")
        }
        self.limit = limit
        self.cancellable = cancellable
        let box = CancellableBox(cancellable)
        self.box = box
        timer = DispatchWorkItem { box.cancel() }
        let (seconds, attoseconds) = limit.components
        let nanos = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanos)), execute: timer)
    }

    /// Whether the deadline has already fired.
    var expired: Bool { g_cancellable_is_cancelled(cancellable) != 0 }

    /// The limit as people read it: "5 s", "1.5 s".
    var limitText: String {
        let (seconds, attoseconds) = limit.components
        let tenths = attoseconds / 100_000_000_000_000_000
        return tenths == 0 ? "\(seconds) s" : "\(seconds).\(tenths) s"
    }

    deinit {
        timer.cancel()
        g_object_unref(cancellable)
    }
}
