// The library raced in one process: StressBudget-style numbers of Swift tasks (16 by
// default, STRESS_TASKS; STRESS_OPS operations each, 50 by default) make random add,
// set, read and remove calls on 20 accounts through the public Keychain API, against
// the real gnome-keyring and kernel keyring. Every value names its task, sequence and
// account, so each read is checked against "some task wrote this, to this account".
import Foundation
import Keygate
import KeygateTestSupport
import XCTest

final class LibraryConcurrencyTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.longRun
    private var environment: InProcessKeychain?
    private let service = "race-\(UUID().uuidString.prefix(8))"

    override func setUpWithError() throws { environment = try InProcessKeychain() }

    override func tearDownWithError() throws {
        try? Keychain(service: service).removeAll()
        environment?.tearDown()
    }

    func test_sixteenTasks_randomAddSetReadRemove_everyReadIsAWrittenValue() async throws {
        let password = try XCTUnwrap(environment?.password)
        let tasks = Self.number("STRESS_TASKS", 16), operations = Self.number("STRESS_OPS", 50)
        let prompter = ScriptedPrompter(Array(repeating: password, count: 4 * tasks))
        let keychain = Keychain(service: service).prompter(prompter)
        try await keychain.set("seed", for: "k0")  // creates and unlocks the keychain once
        let logs = try await withThrowingTaskGroup(of: [Op].self) { group in
            for t in 0..<tasks {
                group.addTask { try Self.work(task: t, operations: operations, keychain: keychain) }
            }
            var all: [Op] = []
            for try await log in group { all += log }
            return all
        }
        var written: [String: Set<String>] = ["k0": ["seed"]]
        for op in logs { if let value = op.wrote { written[op.account, default: []].insert(value) } }
        // An item another task deletes between the store's search and its next call is gone
        // (nil for a read, re-created by a set), never a failure.
        let failures = logs.compactMap(\.failure)
        let foreign = logs.filter { op in op.read.map { !(written[op.account]?.contains($0) ?? false) } ?? false }
        var finalBad: [String] = []
        for i in 0..<20 {
            if let value = try await keychain.string(for: "k\(i)"), !(written["k\(i)"]?.contains(value) ?? false) { finalBad.append("k\(i)=\(value)") }
        }
        XCTAssertEqual(logs.count, tasks * operations)
        XCTAssertEqual(failures, [], "only duplicate-item (from add) may fail")
        XCTAssertEqual(foreign.map { "\($0.account)=\($0.read ?? "")" }, [], "a read returned a value nobody wrote there")
        XCTAssertEqual(finalBad, [])
        print("STRESS library race: tasks=\(tasks) operations=\(logs.count) failures=\(failures.count) badReads=\(foreign.count + finalBad.count)")
    }

    private struct Op: Sendable {
        var account: String
        var wrote: String?
        var read: String?
        var failure: String?
    }

    private static func work(task: Int, operations: Int, keychain: Keychain) throws -> [Op] {
        var log: [Op] = []
        for s in 0..<operations {
            let account = "k\(Int.random(in: 0..<20))"
            let value = "t\(task).s\(s).\(account)"
            var op = Op(account: account)
            do {
                switch Int.random(in: 0..<4) {
                case 0:
                    op.wrote = value
                    do { try keychain.add(value, for: account) } catch let e as KeychainError where e.code == .duplicateItem {}
                case 1:
                    op.wrote = value
                    try keychain.set(value, for: account)
                case 2:
                    op.read = try keychain.string(for: account)
                default:
                    try keychain.remove(account)
                }
            } catch {
                op.failure = "\(account): \(error)"
            }
            log.append(op)
        }
        return log
    }

    private static func number(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil } ?? fallback
    }
}
