// Which PAM stacks answer an item's presence check, flag by flag as on Apple
// (docs/ACCESS_CONTROL.md, "Fallbacks, flag by flag"): the password's stack, the finger's
// (pam_fprintd, keygate-biometry), either, or both. The flags' meaning is AccessControl's
// (`credentials`); this type names the stacks the item's policy gives them. GateServer runs
// them and records each success under the stack that ran, so a finger's record serves the
// items that accept a finger, and a password's those that accept the password.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

struct PresenceRoute: Equatable {
    /// The stack that takes the password; nil when the item accepts no password.
    let passwordService: String?
    /// The stack that takes a finger; nil when the item accepts no finger.
    let fingerService: String?
    /// Both must be presented (`and`); otherwise either is enough.
    let needsBoth: Bool

    /// The route of `access` under `policy`. `legacyCurrentSet`: an item Keygate 0.1.0 sealed as
    /// biometryCurrentSet, which meant the password's current set and still does.
    init(_ access: AccessControl, policy: Policy, legacyCurrentSet: Bool = false) {
        let password = access.contains(.devicePasscode) ? policy.passcodePamService : policy.pamService
        if legacyCurrentSet {
            (passwordService, fingerService, needsBoth) = (policy.pamService, nil, false)
            return
        }
        switch access.credentials {
        case .password: (passwordService, fingerService, needsBoth) = (password, nil, false)
        case .finger: (passwordService, fingerService, needsBoth) = (nil, policy.biometryPamService, false)
        case .fingerOrPassword: (passwordService, fingerService, needsBoth) = (password, policy.biometryPamService, false)
        case .fingerAndPassword: (passwordService, fingerService, needsBoth) = (password, policy.biometryPamService, true)
        }
    }

    /// Every stack the route accepts, the password's first.
    var services: [String] { [passwordService, fingerService].compactMap { $0 } }

    /// The finger alone, no password at all.
    var fingerOnly: Bool { passwordService == nil }

    /// Whether authentications through `done` (services) satisfy the route.
    func isSatisfied(by done: [String]) -> Bool {
        needsBoth ? services.allSatisfy(done.contains) : services.contains(where: done.contains)
    }
}
