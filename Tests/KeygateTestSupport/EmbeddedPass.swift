// `make check` runs the store flows twice: once on the Secret Service, then again with
// KEYGATE_STORE=embedded (the library, KeygateSecurity and CLI test targets). A test class or
// suite those targets hold runs in that second pass unless it says why not, in its own
// declaration: `final class X: XCTestCase, OutsideTheEmbeddedPass` (or `struct X:
// OutsideTheEmbeddedPass` for a Swift Testing suite) and its reason. The Makefile's
// EMBEDDED_PASS_SKIP is made from those declarations (`make embedded-pass-skip` prints it), so
// no class list is kept by hand; EmbeddedPassTests checks the two agree. (Swift Testing's tags
// would say it too, but `swift test` in Swift 6.3 filters by test name only: no tag filter.)
public protocol OutsideTheEmbeddedPass {
    static var outsideTheEmbeddedPass: EmbeddedPassExemption { get }
}

/// Why a class stays out of the embedded-store pass (the first pass runs it either way).
public enum EmbeddedPassExemption: Sendable {
    /// It tests a store, or the choice of store, itself: it names the store it runs on.
    case testsAStoreItself
    /// It talks to one Secret Service provider alone on a bus of its own.
    case ownProviderBus
    /// Its subject is not a flow through the item store (usage, policy, PAM, setup, doctor...).
    case notAStoreFlow
    /// Its subject is the gate itself (the gatekeeper's state and scopes, a finger, what a password
    /// proves), which opens the same sealed item whichever store holds it. The store's side of gated
    /// items runs in this pass all the same: AccessControlCLITests, TerminalCLITests, LeakTests and
    /// KeygateSecurityTests' finger tests read and write them in the embedded store.
    case theGateItself
    /// A long reliability loop (the embedded store has its own kill -9 test, EmbeddedStoreTests).
    case longRun
}
