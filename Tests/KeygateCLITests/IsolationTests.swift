// Isolation between users, with the real binary: the master key that `keygate unlock`
// caches for one user cannot be read, described, found or invalidated by another
// non-root user, nor read by root through the keyring API. Other isolation points are
// proven elsewhere (docs/SECURITY.md lists them): tty scope in AccessControlCLITests,
// policy file ownership and user-file tightening in PolicySetTests and
// PolicyEnforcementTests, the lockout across processes in AccessControlCLITests.
import Foundation
import KeygateTestSupport
import XCTest

final class IsolationTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.longRun
    func test_anotherUser_cannotReadFindOrDropTheCachedMasterKey() throws {
        let owner = try CLIUserHarness()
        let other = try TestUser.create()
        defer { other.remove() }
        // The attempts run while the owner's script waits, so the owner's user keyring
        // (and the key in it) is alive throughout.
        let finished = DispatchSemaphore(value: 0)
        let result = LockedResult()
        nonisolated(unsafe) let ownerRef = owner  // used by the queue only until `finished`
        DispatchQueue.global().async {
            result.set(Result { try ownerRef.run("""
                printf %s x | keygate add -s iso -a k >/dev/null 2>&1; echo add=$?
                keyctl search @u user "keygate:$(id -u):master" > "$HOME/serial.tmp"; mv "$HOME/serial.tmp" "$HOME/serial"
                for i in $(seq 1 600); do [ -e "$HOME/go-on" ] && break; sleep 0.1; done
                echo after=$(keyctl search @u user "keygate:$(id -u):master")
                """, askpass: true) })
            finished.signal()
        }
        let serialFile = owner.user.home + "/serial"
        for _ in 0..<600 where !FileManager.default.fileExists(atPath: serialFile) { usleep(100_000) }
        let serialText = (try? String(contentsOfFile: serialFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let description = "keygate:\(owner.user.uid):master"
        let env = rootToolEnvironment
        var attempts: [ProcessResult] = []
        if let serial = Int(serialText) {
            for verb in [["pipe", String(serial)], ["print", String(serial)], ["rdescribe", String(serial)],
                         ["invalidate", String(serial)], ["search", "@u", "user", description]] {
                let attempt = try Subprocess.run(["runuser", "-u", other.name, "--", "keyctl"] + verb, environment: env)
                XCTAssertNotEqual(attempt.status, 0, "keyctl \(verb.joined(separator: " ")) as another user: \(attempt.out)")
                XCTAssertEqual(attempt.stdout.count, 0, "nothing of the key is shown: \(verb)")
                attempts.append(attempt)
            }
            let asRoot = try Subprocess.run(["keyctl", "pipe", String(serial)], environment: env)
            XCTAssertNotEqual(asRoot.status, 0, "possessor-only: root's keyctl read is refused too")
            XCTAssertTrue(asRoot.err.contains("Permission denied"), asRoot.err)
        }
        FileManager.default.createFile(atPath: owner.user.home + "/go-on", contents: nil)
        finished.wait()
        let r = try result.get()
        XCTAssertNotNil(Int(serialText), "the owner found its cached master key: \(r.summary)")
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertEqual(r.values["after"], serialText, "the attempts changed nothing: \(r.summary)")
        XCTAssertEqual(attempts.count, 5)
    }
}

/// The owner's script result, handed from the queue that ran it.
private final class LockedResult: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<ProcessResult, any Error>?
    func set(_ v: Result<ProcessResult, any Error>) { lock.withLock { value = v } }
    func get() throws -> ProcessResult {
        guard let value = lock.withLock({ value }) else { throw OwnerScriptMissing() }
        return try value.get()
    }
}

private struct OwnerScriptMissing: Error {}
