// The provider matrix's checks beyond the contract, one Swift Testing test a check, its cases
// the providers (KeePassXC, kwalletd, gnome-keyring alone on a private bus), so that a check is
// written once for every provider; what is one provider's own stays in its class
// (KeePassXCStoreTests, KWalletStoreTests, GnomeKeyringProviderTests). A check that locks,
// kills or stops the daemon gets a session of its own; the others use the suite's shared one.
import Foundation
import KeygateTestSupport
import Testing
@testable import Keygate
@testable import KeygateCore
@testable import KeygateStorage

extension ItemStoreMatrixTests {
    /// Each provider's own words: the advice for its locked collection and its daemon's name.
    static func advice(_ kind: StoreKind) -> (locked: String, daemon: String, provider: SecretServiceProvider) {
        switch kind {
        case .keePassXC, .keePassXCDefaults: ("unlock the database in KeePassXC", "KeePassXC", .keePassXC)
        case .kWallet: ("open the wallet", "kwalletd", .kWallet)
        default: ("restart gnome-keyring-daemon with --unlock", "gnome-keyring-daemon", .gnomeKeyring)
        }
    }

    /// The shared session's matrix, emptied when `body` returns.
    private func shared(_ kind: StoreKind, _ body: (ProviderMatrix) throws -> Void) throws {
        try withUnblockedSignals { try sharedMatrix(kind, body) }
    }

    private func sharedMatrix(_ kind: StoreKind, _ body: (ProviderMatrix) throws -> Void) throws {
        let session = try skippingWhenMissing { try ProviderSessions.shared(kind.provider ?? .gnomeKeyring) }
        let matrix = ProviderMatrix(session: session)
        defer { matrix.cleanUp() }
        try body(matrix)
    }

    /// A session of its own, for a check that locks, kills or stops the daemon.
    private func own(_ kind: StoreKind, settings: [String: String] = [:], _ body: (ProviderMatrix) throws -> Void) throws {
        try withUnblockedSignals { try ownMatrix(kind, settings, body) }
    }

    private func ownMatrix(_ kind: StoreKind, _ settings: [String: String], _ body: (ProviderMatrix) throws -> Void) throws {
        let session = try skippingWhenMissing { try ProviderSession(kind.provider ?? .gnomeKeyring, settings: settings) }
        defer { session.stop() }
        try body(ProviderMatrix(session: session))
    }

    // MARK: - who answers, and prompts

    @Test(arguments: StoreKind.providers)
    func provider_isNamed(_ kind: StoreKind) throws {
        try shared(kind) { $0.provider_isNamed(Self.advice(kind).provider) }
    }

    @Test(arguments: StoreKind.providers)
    func createAndDelete_roundTrip(_ kind: StoreKind) throws {
        try shared(kind) { try $0.createAndDelete_roundTrip() }
    }

    /// gnome-keyring with its prompter (gcr-prompter) on a display, where Keygate asks it; the
    /// others show their own windows. What each does with Prompt.Dismiss, measured: gnome-keyring
    /// takes gcr-prompter's window down; KeePassXC and kwalletd5 leave theirs up.
    @Test(arguments: StoreKind.providers)
    func unlockPrompt_waitsForTheWindow_thenFailsSayingSo(_ kind: StoreKind) throws {
        guard kind == .gnomeKeyringProvider else {
            return try own(kind) { try $0.unlockPrompt_waitsForTheWindow_thenFailsSayingSo(windowStays: true) }
        }
        try skippingWhenMissing {
            try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/xdotool"), "xdotool (apt-get install xdotool)")
        }
        try own(kind, settings: ["PROVIDER_SESSION_DISPLAY": "1"]) { matrix in
            let prompter = try matrix.session.startGcrPrompter()
            defer { prompter.terminate(); prompter.waitUntilExit() }
            setenv("DISPLAY", matrix.session.display, 1)
            defer { unsetenv("DISPLAY") }
            try matrix.unlockPrompt_waitsForTheWindow_thenFailsSayingSo(windowStays: false)
        }
    }

    /// Not gnome-keyring: with no prompter it is never asked (GnomeKeyringProviderTests).
    @Test(arguments: [StoreKind.keePassXC, .kWallet])
    func unlockPrompt_dismissed_isUserCanceled(_ kind: StoreKind) throws {
        try own(kind) { try $0.unlockPrompt_dismissed_isUserCanceled() }
    }

    // MARK: - locked, killed, hung

    @Test(arguments: StoreKind.providers)
    func operations_failLocked_withProviderAdvice(_ kind: StoreKind) throws {
        try own(kind) { try $0.operations_failLocked_withProviderAdvice(Self.advice(kind).locked) }
    }

    @Test(arguments: StoreKind.providers)
    func operations_failNotAvailable_whenDaemonKilled(_ kind: StoreKind) throws {
        try own(kind) { try $0.operations_failNotAvailable_whenDaemonKilled() }
    }

    @Test(arguments: StoreKind.providers)
    func operations_failWithinDeadline_whenDaemonHung(_ kind: StoreKind) throws {
        try own(kind) { try $0.operations_failWithinDeadline_whenDaemonHung(naming: Self.advice(kind).daemon) }
    }
}
