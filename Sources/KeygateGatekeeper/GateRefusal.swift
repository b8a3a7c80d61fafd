// What the gatekeeper's refusals say, and the facts about a request's boxes and handle they
// rest on: an invalidated item in the words of its box's kind, the lockouts, a malformed
// request; a 0.1.0 biometryCurrentSet box; the digest under which a context's handle is kept
// in root's records (GateRecords). Pure values; GateServer and RecordedAttempts throw them.
import KeygateCore
import KeygateGateWire

enum GateRefusal {
    static let malformed = KeychainError.param("the gatekeeper refused a malformed request")

    /// An item whose box names a key the gatekeeper does not derive for it, in the words of its kind.
    static func invalidated(_ kind: GateKind, _ identity: ItemIdentity) -> KeychainError {
        switch kind {
        case .currentSet:
            return .itemNotFound("""
                the item \(identity.displayName) was invalidated: it was bound to your previous password (current-set), and the \
                password has changed since
                """)
        case .enrolledSet:
            return .itemNotFound("""
                the item \(identity.displayName) was invalidated: it was bound to the fingerprints enrolled when it was added \
                (biometry-current-set), and a finger has been enrolled, removed or enrolled again since
                """)
        case .device:
            return .itemNotFound("""
                the item \(identity.displayName) was invalidated: it is this-device-only and was sealed on another host, or before \
                this host's key was rotated
                """)
        case .presence, .accessClass:
            return .itemNotFound("""
                the item \(identity.displayName) was invalidated: its user-presence key is not one this host's gatekeeper holds for \
                it (it was sealed on another host, for another item, or its gate secret was reset)
                """)
        }
    }

    /// Apple's biometryLockout, for a finger's attempt.
    static let biometryLockedOut = KeychainError.authFailed("""
        too many failed fingerprint matches: fingers are refused until you authenticate with your password once (`keygate \
        unlock`, or an item that accepts the password)
        """)

    static func lockedOut(_ seconds: UInt32) -> KeychainError {
        .authFailed("too many failed attempts: gated items are locked for \(seconds) more seconds; wait, then try again with the right password")
    }

    /// A box of an item Keygate 0.1.0 sealed as biometryCurrentSet: a current-set box (the
    /// password's shadow entry) under Apple's biometryCurrentSet bit.
    static func isLegacyCurrentSet(_ item: GateRequest.Item, _ boxes: [GateRequest.Box]) -> Bool {
        AccessControl(rawValue: item.accessControl).contains(.biometryCurrentSet) && boxes.contains { $0.kind == .currentSet }
    }

    static func handleDigest(_ handle: [UInt8]) -> String {
        GenericHash.publicDigest(handle, key: Array("keygate.gate.handle.v1".utf8), outputBytes: 16)
            .map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
