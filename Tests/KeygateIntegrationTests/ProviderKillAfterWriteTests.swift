// What a provider killed shortly after an acknowledged write leaves, measured on each real
// provider (scripts/provider-session; its `restart` starts it again on the same files, as the
// next login would): an item added, and an item updated in place (its first value given 6 s to
// be saved, or for gnome-keyring until its keyring file changed), then SIGKILL 10 ms, 0.5 s or 3 s after both writes were acknowledged. Each
// outcome is printed ("kill-after-write: PROVIDER DELAY add=... update=...") for the README's
// provider table and docs/DECISIONS.md. Whatever a provider loses, Keygate must never read a
// value that was not written, and an item left without its secret must read as damaged.
import Foundation
import XCTest
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class ProviderKillAfterWriteTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus
    static let delays: [(text: String, micros: useconds_t)] = [("10ms", 10_000), ("0.5s", 500_000), ("3s", 3_000_000)]

    /// What was found after the restart.
    enum Outcome: String {
        case kept = "kept"
        case old = "old-value"
        case empty = "empty-secret"
        case lost = "lost"
        case wrong = "WRONG-VALUE"
    }

    private func outcome(_ store: SecretServiceStore, _ identity: ItemIdentity, new: [UInt8], old: [UInt8]?) throws -> Outcome {
        guard let item = try store.search(ItemQuery(exactly: identity), loadBlobs: true).first else { return .lost }
        if item.blob == new { return .kept }
        if let old, item.blob == old { return .old }
        if item.isUnfinishedWrite { return .empty }
        return .wrong
    }

    /// One session per delay, with its store and the moment its first value was acknowledged.
    private struct Run {
        let delay: (text: String, micros: useconds_t)
        let session: ProviderSession
        let store: SecretServiceStore
        let unsaved: [String]
        let firstWritten: Date
    }

    static let added = ItemIdentity.generic(service: "issue35-kill", account: "added")
    static let updated = ItemIdentity.generic(service: "issue35-kill", account: "updated")

    /// Runs the three kills on `provider`; returns the outcomes by delay. The three sessions (each
    /// its own folder, bus and display) are started and given their first value before any is
    /// killed, so one 6-s wait covers all three first saves; each session's update still comes at
    /// least 6 s after its own first value, and each is killed and restarted alone.
    @discardableResult
    private func measure(_ provider: ProviderSession.Provider) throws -> [(String, Outcome, Outcome)] {
        var sessions: [ProviderSession] = []
        defer { for session in sessions { session.stop() } }
        var runs: [Run] = []
        for delay in Self.delays {
            let session = try ProviderSession(provider)
            sessions.append(session)
            let store = SecretServiceStore(connection: SecretServiceConnection(address: session.address, environment: .process()))
            let unsaved = session.storeSignature()
            try store.create(ItemAttributes(identity: Self.updated), blob: [1, 1, 1], replace: false)
            runs.append(Run(delay: delay, session: session, store: store, unsaved: unsaved, firstWritten: Date()))
        }
        var rows: [(String, Outcome, Outcome)] = []
        for run in runs {
            // The first value is given 6 s to be saved. gnome-keyring writes its keyring file before it
            // answers, so the wait ends when that file has changed. kwalletd5 writes its wallet file
            // once the item exists, before its secret is set, and KeePassXC's outcomes move when its
            // next writes follow its first save closely: both are given the whole 6 s from their own
            // first value.
            if provider == .gnomeKeyring {
                let saved = run.session.waitUntilSaved(since: run.unsaved, atMost: 6)
                print("kill-after-write: \(provider.rawValue) \(run.delay.text) first value saved after "
                      + (saved.map { String(format: "%.2f s", $0) } ?? "more than 6 s"))
            } else {
                let left = 6 - Date().timeIntervalSince(run.firstWritten)
                if left > 0 { usleep(useconds_t(left * 1_000_000)) }
            }
            try run.store.create(ItemAttributes(identity: Self.updated), blob: [2, 2, 2], replace: true)
            try run.store.create(ItemAttributes(identity: Self.added), blob: [3, 3, 3], replace: false)
            usleep(run.delay.micros)
            run.session.killProvider()
            try run.session.restart()

            let after = SecretServiceStore(connection: SecretServiceConnection(address: run.session.address, environment: .process()))
            let add = try outcome(after, Self.added, new: [3, 3, 3], old: nil)
            let update = try outcome(after, Self.updated, new: [2, 2, 2], old: [1, 1, 1])
            print("kill-after-write: \(provider.rawValue) \(run.delay.text) add=\(add.rawValue) update=\(update.rawValue)")
            XCTAssertNotEqual(add, .wrong, "\(provider.rawValue) \(run.delay.text)")
            XCTAssertNotEqual(update, .wrong, "\(provider.rawValue) \(run.delay.text)")
            if add == .empty {
                let damaged = try after.searchWithoutWindows(ItemQuery(exactly: Self.added)).first?.isUnfinishedWrite
                XCTAssertEqual(damaged, true, "an item left without its secret reads as damaged")
            }
            rows.append((run.delay.text, add, update))
        }
        return rows
    }

    /// gnome-keyring writes its keyring file before it answers: nothing is lost.
    func test_gnomeKeyring_killedAfterAWrite_losesNothing() throws {
        let rows = try measure(.gnomeKeyring)
        for (delay, add, update) in rows {
            XCTAssertEqual(add, .kept, delay)
            XCTAssertEqual(update, .kept, delay)
        }
    }

    func test_keePassXC_killedAfterAWrite_whatItKeeps() throws {
        try measure(.keePassXC)
    }

    func test_kWallet_killedAfterAWrite_whatItKeeps() throws {
        try measure(.kWallet)
    }
}
