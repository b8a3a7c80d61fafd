// An acknowledged write must read back, and a read must never answer "not found" for an item
// it could not look at. Many threads set, read and delete items through the Security surface
// (SecItem*, as KeychainSwift does: delete then add) and through `Keychain`, while STRESS_PROCS
// `keygate` processes (2; 8 in make stress) write and read beside them on their own connections
// (what made gnome-keyring 42.1 crash and restart, docs/DECISIONS.md), STRESS_LOCKERS processes
// (1) lock the default collection again and again with Service.Lock, as another client or a
// daemon that came back after a crash leaves it (Secret Service only), and every thread also
// reads a canary item that nobody changes. After each race, one thread does what an Apple
// wrapper's suite did after its concurrency test: set a prefixed key, set the same key
// unprefixed, read the prefixed one. STRESS_ROUNDS rounds (3 in make check; more in make
// stress) of STRESS_SECONDS (2; 30) with STRESS_TASKS threads (8).
// A miss fails the test, which says what it was: the item is in the store, looked up on a
// connection of its own (the read failed), or it is not (the write was lost). Only success,
// not-found (a racing delete) and duplicate (a racing add) are expected in the race; the
// canary is never absent, and reads of it that fail say why (locked, timed out, restarted).
import Foundation
import Keygate
@testable import KeygateSecurity
@testable import KeygateStorage
import KeygateTestSupport
import XCTest

final class WriteThenReadStressTests: SecItemKeyTestCase {
    override class var servicePrefix: String { "write-read" }
    /// Enough answers for a keychain unlocked again after its cached key was dropped (a
    /// lock-after, or another suite of root's evicting root's keys on a shared machine).
    override class var passwordAnswers: Int { 200 }

    private static func number(_ name: String, _ fallback: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil } ?? fallback
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

    /// What the race saw, counted across threads.
    private final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var counts: [OSStatus: Int] = [:]
        private(set) var errors: [String] = []
        private(set) var canaryReads = 0
        private(set) var canaryMisses: [String] = []
        private(set) var canaryErrors: [OSStatus: Int] = [:]
        func add(_ s: OSStatus) { lock.withLock { counts[s, default: 0] += 1 } }
        func add(error: String) { lock.withLock { if errors.count < 20 { errors.append(error) } } }
        func canary(_ status: OSStatus, _ value: String?, message: String) {
            lock.withLock {
                canaryReads += 1
                if status == errSecSuccess, value == "canary" { return }
                if status == errSecItemNotFound || (status == errSecSuccess && value != "canary") {
                    canaryMisses.append("\(status) \(value ?? "nil") \(message)")
                } else {
                    canaryErrors[status, default: 0] += 1
                    if errors.count < 20 { errors.append("canary \(status): \(message)") }
                }
            }
        }
    }

    private func race(seconds: Int, threads: Int, tally: Tally) {
        let end = Date().addingTimeInterval(TimeInterval(seconds))
        let password = environment?.password ?? ""
        let service = self.service
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            // Half the threads go through `Keychain`, half through SecItem*.
            let keychain = Keygate.Keychain(service: service).prompter(ScriptedPrompter(Array(repeating: password, count: 50)))
            var n = 0
            while Date() < end {
                let account = "race\(Int.random(in: 0..<12))"
                let value = "t\(t).n\(n)"
                n += 1
                if n % 4 == 0 {
                    let (status, read) = get("canary")
                    tally.canary(status, read, message: status == errSecSuccess ? "" : SecCopyErrorMessageString(status, nil) ?? "")
                    continue
                }
                if t % 2 == 0 {
                    switch Int.random(in: 0..<3) {
                    case 0: tally.add(set(value, account))
                    case 1: tally.add(get(account).0)
                    default: tally.add(SecItemDelete(query(account) as CFDictionary))
                    }
                    continue
                }
                do {
                    switch Int.random(in: 0..<3) {
                    case 0: try keychain.set(value, for: account)
                    case 1: _ = try keychain.string(for: account)
                    default: try keychain.remove(account)
                    }
                    tally.add(errSecSuccess)
                } catch let e as KeychainError {
                    tally.add(e.status)
                    if ![errSecItemNotFound, errSecDuplicateItem, errSecInteractionNotAllowed].contains(e.status) { tally.add(error: e.message) }
                } catch {
                    tally.add(error: "\(error)")
                }
            }
        }
    }

    /// `keygate` processes racing beside the threads, on their own accounts and connections,
    /// until the file `stop` appears.
    private func pressure(_ count: Int, stop: String) throws -> [Process] {
        guard count > 0 else { return [] }
        let binary = PackagePaths.keygateBinary
        try Requirement.require(FileManager.default.isExecutableFile(atPath: binary), "the built keygate at \(binary)")
        return try (0..<count).map { p in
            try shellLoop("""
                i=0
                while [ ! -e "$STOP" ]; do
                  i=$((i+1)); a=p\(p)k$((i % 6))
                  printf %s "v$i" | "$KG" add -U -s "$SVC" -a "$a" --access none >/dev/null 2>>"$STOP.err"
                  "$KG" get -s "$SVC" -a "$a" >/dev/null 2>>"$STOP.err"
                  [ $((i % 3)) = 0 ] && "$KG" delete -s "$SVC" -a "$a" >/dev/null 2>>"$STOP.err"
                done
                """, ["KG": binary, "SVC": service, "STOP": stop])
        }
    }

    /// Processes that lock the default collection every 20 ms until the file `stop` appears.
    private func lockers(_ count: Int, stop: String) throws -> [Process] {
        try (0..<count).map { _ in
            try shellLoop("""
                while [ ! -e "$STOP" ]; do
                  gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \
                    --method org.freedesktop.Secret.Service.Lock "['/org/freedesktop/secrets/aliases/default']" >/dev/null 2>&1
                  sleep 0.02
                done
                """, ["STOP": stop])
        }
    }

    /// A running `/bin/sh -c script` with `variables` added to this process's environment, and
    /// its output discarded (the writers keep their errors in `$STOP.err`, which the test reads).
    private func shellLoop(_ script: String, _ variables: [String: String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.environment = ProcessInfo.processInfo.environment.merging(variables) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// The process that owns org.freedesktop.secrets now; 0 when none does.
    private func providerPID() -> Int32 {
        let r = try? Subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets"], timeout: 10)
        return r?.out.split(separator: " ").last.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
    }

    /// Whether the item is in the store, looked up apart from the process's shared connection.
    private func isStored(_ account: String) throws -> Bool {
        let identity = ItemIdentity.generic(service: service, account: account)
        if ProcessInfo.processInfo.environment["KEYGATE_STORE"] == "embedded" {
            let directory = try XCTUnwrap(environment?.dataHome) + "/keygate"
            return try !EmbeddedStore(directory: directory).search(ItemQuery(exactly: identity), loadBlobs: true).isEmpty
        }
        let connection = SecretServiceConnection(environment: KeygateEnvironment.process())
        let store = SecretServiceStore(connection: connection, unlockPrompt: .auto)
        return try !store.search(ItemQuery(exactly: identity), loadBlobs: true).isEmpty
    }

    func test_manyWritersAndReaders_thenAWriteOfAnotherAccount_readsBack() throws {
        let rounds = Self.number("STRESS_ROUNDS", 3), seconds = Self.number("STRESS_SECONDS", 2)
        let threads = Self.number("STRESS_TASKS", 8), processes = Self.number("STRESS_PROCS", 2)
        let lockerCount = ProcessInfo.processInfo.environment["KEYGATE_STORE"] == "embedded" ? 0 : Self.number("STRESS_LOCKERS", 1)
        XCTAssertEqual(set("seed", "seed"), errSecSuccess)   // makes and unlocks the keychain once
        XCTAssertEqual(set("canary", "canary"), errSecSuccess)
        let tally = Tally()
        let embedded = ProcessInfo.processInfo.environment["KEYGATE_STORE"] == "embedded"
        var misses: [String] = []
        var lost = 0, unread = 0, restarts = 0
        let stop = NSTemporaryDirectory() + "write-read-stop-\(UUID().uuidString)"
        for round in 0..<rounds {
            let before = embedded ? 0 : providerPID()
            let pressing = try pressure(processes, stop: stop) + lockers(lockerCount, stop: stop)
            race(seconds: seconds, threads: threads, tally: tally)
            FileManager.default.createFile(atPath: stop, contents: nil)
            for process in pressing { process.waitUntilExit() }
            try? FileManager.default.removeItem(atPath: stop)
            let after = embedded ? 0 : providerPID()
            if before != after { restarts += 1 }
            // The collection as the lockers left it: the next call unlocks it as it would after a crash.
            let prefixed = "prefix_key \(round)", plain = "key \(round)"
            let first = set("with prefix \(round)", prefixed)
            let second = set("without \(round)", plain)
            let (status, value) = get(prefixed)
            guard first == errSecSuccess, second == errSecSuccess else {
                misses.append("round \(round): set answered \(first), \(second)")
                continue
            }
            if status == errSecSuccess, value == "with prefix \(round)" { continue }
            let stored = try? isStored(prefixed)
            if stored == true { unread += 1 } else if stored == false { lost += 1 }
            misses.append("round \(round): read answered \(status) (\(SecCopyErrorMessageString(status, nil) ?? "")), "
                          + "value \(value ?? "nil"); the item is \(stored == true ? "in the store: the read failed" : stored == false ? "not in the store: the write was lost" : "unknown")")
        }
        for miss in tally.canaryMisses.prefix(3) { print("canary miss: \(miss)") }
        if let text = try? String(contentsOfFile: stop + ".err", encoding: .utf8) {
            print("STRESS write then read: the keygate processes said \(Array(Set(text.split(separator: "\n").filter { !$0.contains(": stored ") }.map { String($0.prefix(300)) })).prefix(6))")
        }
        let canaryAbsent = tally.canaryMisses.count
        let canaryStillThere = (try? isStored("canary")) ?? false
        // The canary read by a process of its own: tells a stored blob that changed from this process's state.
        let byCLI = processes > 0 ? (try? Subprocess.run([PackagePaths.keygateBinary, "get", "-s", service, "-a", "canary"], timeout: 30)) : nil
        let (finalStatus, finalValue) = get("canary")
        print("STRESS write then read canary after: this process \(finalStatus) \(finalValue ?? "nil"); "
              + "a new process \(byCLI.map { "exit \($0.status) \($0.out)" } ?? "not run")")
        let unexpected = tally.counts.filter { ![errSecSuccess, errSecItemNotFound, errSecDuplicateItem].contains($0.key) }
        print("STRESS write then read: rounds=\(rounds) seconds=\(seconds) threads=\(threads) processes=\(processes) lockers=\(lockerCount) "
              + "calls=\(tally.counts.values.reduce(0, +)) providerRestarts=\(restarts) lost=\(lost) unread=\(unread) "
              + "canaryReads=\(tally.canaryReads) canaryAbsent=\(canaryAbsent) canaryErrors=\(tally.canaryErrors.values.reduce(0, +)) "
              + "unexpected=\(unexpected.values.reduce(0, +))")
        if !tally.errors.isEmpty { print("STRESS write then read errors: \(tally.errors.prefix(8))") }
        XCTAssertTrue(canaryStillThere)
        XCTAssertEqual(misses, [], "an acknowledged write read back as nothing")
        XCTAssertEqual(canaryAbsent, 0, "a read answered not found for an item that was there: \(tally.canaryMisses.prefix(3))")
        // A provider that crashed answers some calls with an error (locked, timed out, restarted),
        // and a collection a locker locked again right after the read unlocked it is the locked
        // error: an error is allowed then, a wrong "not found" never.
        let allowed: Set<OSStatus> = lockerCount > 0 ? [errSecInteractionNotAllowed] : []
        if restarts == 0 {
            XCTAssertEqual(unexpected.filter { !allowed.contains($0.key) }, [:],
                           "statuses other than success, not-found and duplicate in the race: \(tally.errors.prefix(5))")
            XCTAssertEqual(tally.canaryErrors.filter { !allowed.contains($0.key) }, [:],
                           "the canary, never changed, failed to read: \(tally.errors.prefix(5))")
        }
    }
}
