// FailureCounter: the lockout after `threshold` consecutive failures, its window under an
// injected clock, the reset on success, a corrupt file read as zero failures (the counter
// fails open; it never decides a key), and the file's 0600 mode.
import Foundation
import XCTest
@testable import Keygate

/// A clock the test moves by hand.
private final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: UInt64 = 1_700_000_000
    var now: UInt64 { lock.withLock { value } }
    func advance(_ seconds: UInt64) { lock.withLock { value += seconds } }
    func rewind(_ seconds: UInt64) { lock.withLock { value -= seconds } }
}

final class FailureCounterTests: XCTestCase {
    private var folder = ""
    private let clock = ManualClock()

    override func setUpWithError() throws {
        folder = try makeTemporaryFolder(self) + "/data"  // not yet created: the counter makes it
    }

    private func counter(threshold: Int = 3, seconds: UInt32 = 60) -> FailureCounter {
        let clock = self.clock
        return FailureCounter(directory: folder, threshold: threshold, lockoutSeconds: seconds, now: { clock.now })
    }

    func test_failuresBelowTheThreshold_doNotLockOut() throws {
        let c = counter()
        c.recordFailure()
        c.recordFailure()
        XCTAssertEqual(c.failures, 2)
        XCTAssertNil(c.secondsLeft())
        XCTAssertNoThrow(try c.checkNotLockedOut())
    }

    func test_theFailureAtTheThreshold_startsTheLockout_withSecondsLeftInTheMessage() throws {
        let c = counter()
        for _ in 0..<3 { c.recordFailure() }
        XCTAssertEqual(c.secondsLeft(), 60)
        clock.advance(15)
        XCTAssertEqual(c.secondsLeft(), 45)
        let error = assertThrowsKeychainError(.authFailed) { try c.checkNotLockedOut() }
        XCTAssertEqual(error?.message.hasPrefix("too many failed attempts: gated items are locked for 45 more seconds"), true,
                       error?.message ?? "")
    }

    func test_lockout_isSharedByEveryCounterOnTheSameFolder() {
        counter().recordFailure()
        counter().recordFailure()
        counter().recordFailure()
        XCTAssertEqual(counter().secondsLeft(), 60)
    }

    func test_lockout_endsWhenItsWindowHasPassed_andTheCountStartsAgain() throws {
        let c = counter()
        for _ in 0..<3 { c.recordFailure() }
        clock.advance(59)
        XCTAssertEqual(c.secondsLeft(), 1)
        clock.advance(1)
        XCTAssertNil(c.secondsLeft())
        XCTAssertNoThrow(try c.checkNotLockedOut())
        XCTAssertEqual(c.failures, 0)
        c.recordFailure()
        XCTAssertNil(c.secondsLeft(), "one failure after a lockout must not lock again")
        c.recordFailure()
        c.recordFailure()
        XCTAssertEqual(c.secondsLeft(), 60)
    }

    func test_success_resetsTheCount() {
        let c = counter()
        c.recordFailure()
        c.recordFailure()
        c.recordSuccess()
        XCTAssertEqual(c.failures, 0)
        c.recordFailure()
        c.recordFailure()
        XCTAssertNil(c.secondsLeft(), "failures before a success must not count towards the lockout")
    }

    func test_aClockSetBack_neverLocksLongerThanOnePeriod() {
        let c = counter()
        for _ in 0..<3 { c.recordFailure() }
        clock.rewind(10_000)
        XCTAssertEqual(c.secondsLeft(), 60)
    }

    func test_thresholdZero_disablesTheLockout() {
        let c = counter(threshold: 0)
        for _ in 0..<20 { c.recordFailure() }
        XCTAssertNil(c.secondsLeft())
        XCTAssertEqual(c.failures, 20)
    }

    func test_aCorruptFile_readsAsZeroFailures_andIsReplacedOnTheNextFailure() throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let c = counter()
        try Data("{\"version\":1,\"failures\":\"lots\"".utf8).write(to: URL(fileURLWithPath: c.path))
        XCTAssertEqual(c.failures, 0)
        XCTAssertNil(c.secondsLeft())
        XCTAssertNoThrow(try c.checkNotLockedOut())
        c.recordFailure()
        XCTAssertEqual(c.failures, 1)
    }

    func test_theFile_isMode0600_inA0700Folder() throws {
        let oldMask = umask(0)
        defer { umask(oldMask) }
        let c = counter()
        c.recordFailure()
        var info = stat()
        XCTAssertEqual(lstat(c.path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(lstat(folder, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
    }

    func test_parallelFailures_areEachCounted() {
        let c = counter(threshold: 0)
        DispatchQueue.concurrentPerform(iterations: 40) { _ in c.recordFailure() }
        XCTAssertEqual(c.failures, 40)
    }
}
