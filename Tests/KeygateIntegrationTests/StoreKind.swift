// The item stores ItemStoreMatrixTests runs on, and one test's store of each kind: made
// before a check and emptied after it. The embedded store is a SQLite file in a folder of
// its own; the Secret Service store is gnome-keyring on the suite's bus (scripts/secret-session);
// the provider kinds are a real provider alone on a private bus (ProviderSession), one
// session per provider shared by the suite and stopped when it ends (StopsProviderSessions).
// KeePassXC runs twice: tuned (its confirmations off, as the provider matrix always ran it)
// and as Debian installs it (keepassxc-defaults), where a person at its display answers the
// Access Request and delete windows (WindowAnswerer) and Keygate may show them.
// The tests run with the signal mask emptied (withUnblockedSignals, SwiftTestingSystems.swift).
import Foundation
import KeygateTestSupport
import Testing
@testable import Keygate
@testable import KeygateCore
@testable import KeygateStorage

enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case embedded
    case secretService = "secret-service"
    case gnomeKeyringProvider = "gnome-keyring"
    case keePassXC = "keepassxc"
    /// KeePassXC with the settings Debian installs (PROVIDER_SESSION_DEFAULTS=1).
    case keePassXCDefaults = "keepassxc-defaults"
    case kWallet = "kwallet"

    var testDescription: String { rawValue }

    /// The provider matrix: each Secret Service provider alone on a private bus.
    static let providers: [StoreKind] = [.gnomeKeyringProvider, .keePassXC, .kWallet]

    var provider: ProviderSession.Provider? {
        switch self {
        case .embedded, .secretService: nil
        case .gnomeKeyringProvider: .gnomeKeyring
        case .keePassXC, .keePassXCDefaults: .keePassXC
        case .kWallet: .kWallet
        }
    }
}

/// The providers' shared sessions, started on first use.
enum ProviderSessions {
    static let gnomeKeyring = ProviderFixture(.gnomeKeyring)
    static let keePassXC = ProviderFixture(.keePassXC)
    static let kWallet = ProviderFixture(.kWallet)
    static let keePassXCDefaults = ProviderFixture(.keePassXC, settings: ["PROVIDER_SESSION_DEFAULTS": "1"], answers: [
        WindowAnswerer.Answer(name: "Access Request", keys: ["Return"]),
        // Its delete confirmation's default button is Cancel: the person moves to the other first.
        WindowAnswerer.Answer(name: "recycle bin|Delete entr", keys: ["shift+Tab", "Return"]),
    ])

    static func shared(_ provider: ProviderSession.Provider) throws -> ProviderSession {
        switch provider {
        case .gnomeKeyring: try gnomeKeyring.shared()
        case .keePassXC: try keePassXC.shared()
        case .kWallet: try kWallet.shared()
        }
    }

    /// The shared session of a provider kind (KeePassXC's defaults have their own).
    static func shared(_ kind: StoreKind) throws -> ProviderSession {
        kind == .keePassXCDefaults ? try keePassXCDefaults.shared() : try shared(kind.provider ?? .gnomeKeyring)
    }

    static func stopAll() {
        for fixture in [gnomeKeyring, keePassXC, kWallet, keePassXCDefaults] { fixture.stop() }
    }
}

/// A suite trait: stops the shared provider sessions when the suite ends, as the provider
/// classes' `tearDown()` did.
struct StopsProviderSessions: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        defer { ProviderSessions.stopAll() }
        try await function()
    }
}

extension Trait where Self == StopsProviderSessions {
    static var stopsProviderSessions: Self { StopsProviderSessions() }
}

/// One test's store of `kind`, emptied when `body` returns (children it starts see no blocked signal).
func withStore(_ kind: StoreKind, _ body: (ItemStoreContract) throws -> Void) throws {
    try withUnblockedSignals { try withStoreOfKind(kind, body) }
}

private func withStoreOfKind(_ kind: StoreKind, _ body: (ItemStoreContract) throws -> Void) throws {
    switch kind {
    case .embedded:
        let directory = NSTemporaryDirectory() + "kg-embedded-\(UUID().uuidString)/keygate"
        defer {
            _ = chmod(directory, 0o700)
            try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent)
        }
        try body(ItemStoreContract(store: EmbeddedStore(directory: directory, deadline: .seconds(5)), tag: "kg-embedded"))
    case .secretService:
        try skippingWhenMissing { try Requirement.requireSecretService() }
        let tag = "kg-test-\(UUID().uuidString.prefix(8))"
        let store = SecretServiceStore(environment: .process())
        defer {
            _ = try? store.delete(ItemQuery(itemClass: .genericPassword, service: tag))
            _ = try? store.delete(ItemQuery(itemClass: .genericPassword, service: tag + "-other"))
            _ = try? store.delete(ItemQuery(itemClass: .internetPassword, server: tag + ".example"))
        }
        try body(ItemStoreContract(store: store, tag: tag))
    case .gnomeKeyringProvider, .keePassXC, .keePassXCDefaults, .kWallet:
        let session = try skippingWhenMissing { try ProviderSessions.shared(kind) }
        let matrix = ProviderMatrix(session: session,
                                    unlockPrompt: kind == .keePassXCDefaults ? .auto : .never)
        defer { matrix.cleanUp() }
        try body(matrix.contract)
    }
}
