// The counterpart of Apple's LAContext: one authentication shared by several
// reads. The gate keys a PAM authentication unwrapped are kept in this object
// (locked memory) for `reuseDuration`, so passing one context to several reads
// prompts once. `invalidate()` wipes them; `interactionNotAllowed` turns any read
// that would need a prompt into errSecInteractionNotAllowed.
import Dispatch
import Synchronization
internal import Glibc

public final class AuthenticationContext: Sendable {
    private struct State {
        var localizedReason: String?
        var reuseDuration: UInt32 = 300
        var interactionNotAllowed = false
        var keys: [String: (pair: BoxKeyPair, until: UInt64)] = [:]
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
            $0.keys.removeAll()
            $0.invalidated = true
        }
    }

    var isInvalidated: Bool { state.withLock { $0.invalidated } }

    func key(_ name: String) -> BoxKeyPair? {
        state.withLock {
            guard let entry = $0.keys[name], entry.until > UInt64(time(nil)) else { return nil }
            return entry.pair
        }
    }

    func remember(_ name: String, _ pair: BoxKeyPair) {
        state.withLock {
            guard !$0.invalidated, $0.reuseDuration > 0 else { return }
            $0.keys[name] = (pair, UInt64(time(nil)) + UInt64($0.reuseDuration))
        }
    }

    /// Authenticates now, as Apple's evaluatePolicy does, through the user-presence
    /// PAM service; the keys it unwraps serve later reads through this context.
    public func evaluate(prompter: any Prompter) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let operations = try KeychainOperations(prompter: prompter, context: self)
                    _ = try operations.keys.gateKeys(for: [.userPresence])
                })
            }
        }
    }
}
