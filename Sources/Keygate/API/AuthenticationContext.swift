// The counterpart of Apple's LAContext: one authentication shared by several
// reads. The context holds a handle keygate-gatekeeper issued (docs/GATEKEEPER.md),
// bound to this process and capped by `reuseDuration` (at most 5 minutes): it opens
// nothing by itself, and no key is ever held here. `invalidate()` drops it;
// `interactionNotAllowed` turns any read that would need a prompt into
// errSecInteractionNotAllowed.
import Dispatch
import Synchronization

public final class AuthenticationContext: Sendable {
    private struct State {
        var localizedReason: String?
        var reuseDuration: UInt32 = 300
        var interactionNotAllowed = false
        var handle: (bytes: [UInt8], until: UInt64)?
        var invalidated = false
    }

    private let state = Mutex(State())

    public init() {}

    /// The reason shown in the prompt (Apple's localizedReason).
    public var localizedReason: String? {
        get { state.withLock { $0.localizedReason } }
        set { state.withLock { $0.localizedReason = newValue } }
    }

    /// Seconds an authentication through this context stays valid for its reads.
    public var reuseDuration: UInt32 {
        get { state.withLock { $0.reuseDuration } }
        set { state.withLock { $0.reuseDuration = newValue } }
    }

    /// When true, a read that needs a prompt fails with errSecInteractionNotAllowed.
    public var interactionNotAllowed: Bool {
        get { state.withLock { $0.interactionNotAllowed } }
        set { state.withLock { $0.interactionNotAllowed = newValue } }
    }

    /// Wipes the keys this context holds; reads through it prompt again.
    public func invalidate() {
        state.withLock {
            if var handle = $0.handle?.bytes { Sodium.wipe(&handle) }
            $0.handle = nil
            $0.invalidated = true
        }
    }

    var isInvalidated: Bool { state.withLock { $0.invalidated } }

    /// The gatekeeper's handle, while this context's reuse duration lasts.
    var handle: [UInt8]? {
        state.withLock {
            guard let entry = $0.handle, entry.until > UInt64(WallClock.seconds) else { return nil }
            return entry.bytes
        }
    }

    func remember(handle: [UInt8]) {
        state.withLock {
            guard !$0.invalidated, $0.reuseDuration > 0 else { return }
            $0.handle = (handle, UInt64(WallClock.seconds) + UInt64($0.reuseDuration))
        }
    }

    /// Authenticates now, as Apple's evaluatePolicy does, through the user-presence
    /// PAM service (with `biometric`, a finger through the biometric one); the gatekeeper's
    /// handle serves later reads through this context.
    public func evaluate(prompter: any Prompter, biometric: Bool = false) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let operations = try KeychainOperations(prompter: prompter, context: self)
                    try operations.keys.evaluatePresence(biometric: biometric)
                })
            }
        }
    }
}
