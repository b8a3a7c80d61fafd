// An acknowledged write must read back: many threads set, read and delete items through the
// Security surface (SecItem*, as KeychainSwift does: delete then add) and through `Keychain`,
// then one thread does what an Apple wrapper's suite did after its concurrency test: set a
// prefixed key, set the same key unprefixed, read the prefixed one. Repeated for STRESS_ROUNDS
// rounds (3 in make check, more in make stress), each race STRESS_SECONDS long (2; 30 in
// make stress) with STRESS_TASKS threads (8). A read that answers "not found" for an item
// whose write was acknowledged fails the test, and the test says which it was: the item is in
// the store (looked up on a connection of its own: the read failed) or not (the write was lost).
// Every status a call returns is counted; only success, not-found (a racing delete) and
// duplicate (a racing add) are expected in the race.
import Foundation
import Keygate
@testable import KeygateSecurity
@testable import KeygateStorage
import KeygateTestSupport
import XCTest

final class WriteThenReadStressTests: XCTestCase {
    private var environment: InProcessKeychain?
    private var service = ""

    override func setUpWithError() throws {
        let keychain = try InProcessKeychain()
        environment = keychain
        service = "write-read-\(UUID().uuidString.prefix(8))"
        KeygateSecurityConfiguration.prompter = ScriptedPrompter(Array(repeating: keychain.password, count: 8))
    }

    override func tearDownWithError() throws {
        _ = try? KeychainOperations(prompter: ScriptedPrompter([])).delete(matching: ItemQuery(service: service))
        KeygateSecurityConfiguration.prompter = nil
        environment?.tearDown()
    }

    private static func number(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? fallback
    }

    private func query(_ account: String, _ extra: [String: Any] = [:]) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
         kSecAttrAccount as String: account].merging(extra) { $1 }
    }

    /// KeychainSwift's set: delete, then add. The add's status.
    private func set(_ value: String, _ account: String) -> OSStatus {
        _ = SecItemDelete(query(account) as CFDictionary)
        return SecItemAdd(query(account, [kSecValueData as String: Data(value.utf8)]) as CFDictionary, nil)
    }

    private func get(_ account: String) -> (OSStatus, String?) {
        var result: AnyObject?
        let status = SecItemCopyMatching(query(account, [kSecReturnData as String: true]) as CFDictionary, &result)
        return (status, (result as? Data).map { String(decoding: $0, as: UTF8.self) })
    }

    /// Statuses seen in the race, by status.
    private final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [OSStatus: Int] = [:]
        private var errors: [String] = []
        func add(_ s: OSStatus) { lock.lock(); counts[s, default: 0] += 1; lock.unlock() }
        func add(error: String) { lock.lock(); errors.append(error); lock.unlock() }
        var snapshot: ([OSStatus: Int], [String]) { lock.lock(); defer { lock.unlock() }; return (counts, errors) }
    }

    private func race(seconds: Int, threads: Int, tally: Tally) {
        let end = Date().addingTimeInterval(TimeInterval(seconds))
        let password = environment?.password ?? ""
        let service = self.service
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            // Half the threads go through `Keychain`, half through SecItem*.
            let keychain = Keygate.Keychain(service: service).prompter(ScriptedPrompter(Array(repeating: password, count: 4)))
            var n = 0
            while Date() < end {
                let account = "race\(Int.random(in: 0..<12))"
                let value = "t\(t).n\(n)"
                n += 1
                if t % 2 == 0 {
                    switch Int.random(in: 0..<3) {
                    case 0: tally.add(set(value, account))
                    case 1: tally.add(get(account).0)
                    default: tally.add(SecItemDelete(query(account) as CFDictionary))
                    }
                } else {
                    do {
                        switch Int.random(in: 0..<3) {
                        case 0: try keychain.set(value, for: account)
                        case 1: _ = try keychain.string(for: account)
                        default: try keychain.remove(account)
                        }
                        tally.add(errSecSuccess)
                    } catch let e as KeychainError {
                        tally.add(e.status)
                        if ![errSecItemNotFound, errSecDuplicateItem].contains(e.status) { tally.add(error: e.message) }
                    } catch {
                        tally.add(error: "\(error)")
                    }
                }
            }
        }
    }

    /// Whether the item is in the store, looked up apart from the process's shared connection.
    private func isStored(_ account: String) throws -> Bool {
        let identity = ItemIdentity.generic(service: service, account: account)
        if ProcessInfo.processInfo.environment["KEYGATE_STORE"] == "embedded" {
            let directory = try XCTUnwrap(environment?.dataHome) + "/keygate"
            return try !EmbeddedStore(directory: directory).search(ItemQuery(exactly: identity), loadBlobs: true).isEmpty
        }
        let connection = SecretServiceConnection(environment: KeygateEnvironment.process())
        let store = SecretServiceStore(connection: connection)
        return try !store.search(ItemQuery(exactly: identity), loadBlobs: true).isEmpty
    }

    func test_manyWritersAndReaders_thenAWriteOfAnotherAccount_readsBack() throws {
        let rounds = Self.number("STRESS_ROUNDS", 3), seconds = Self.number("STRESS_SECONDS", 2)
        let threads = Self.number("STRESS_TASKS", 8)
        XCTAssertEqual(set("seed", "seed"), errSecSuccess)   // makes and unlocks the keychain once
        let tally = Tally()
        var misses: [String] = []
        var lost = 0, unread = 0, checked = 0
        for round in 0..<rounds {
            race(seconds: seconds, threads: threads, tally: tally)
            let prefixed = "prefix_key \(round)", plain = "key \(round)"
            let first = set("with prefix \(round)", prefixed)
            let second = set("without \(round)", plain)
            let (status, value) = get(prefixed)
            checked += 1
            guard first == errSecSuccess, second == errSecSuccess else {
                misses.append("round \(round): set answered \(first), \(second)")
                continue
            }
            if status == errSecSuccess, value == "with prefix \(round)" { continue }
            let stored = (try? isStored(prefixed))
            if stored == true { unread += 1 } else { lost += 1 }
            misses.append("round \(round): read answered \(status) (\(SecCopyErrorMessageString(status, nil) ?? "")), "
                          + "value \(value ?? "nil"); the item is \(stored == true ? "in the store: the read failed" : stored == false ? "not in the store: the write was lost" : "unknown")")
        }
        let (counts, errors) = tally.snapshot
        let unexpected = counts.filter { ![errSecSuccess, errSecItemNotFound, errSecDuplicateItem].contains($0.key) }
        print("STRESS write then read: rounds=\(rounds) seconds=\(seconds) threads=\(threads) calls=\(counts.values.reduce(0, +)) "
              + "checked=\(checked) lost=\(lost) unread=\(unread) unexpected=\(unexpected.values.reduce(0, +))")
        XCTAssertEqual(misses, [], "an acknowledged write read back as nothing")
        XCTAssertEqual(unexpected, [:], "statuses other than success, not-found and duplicate in the race: \(errors.prefix(5))")
    }
}
