// The daemon's queue of callers (Gatekeeper/GateCallerQueue.swift), as a pure value: a user's
// cap, the order among users whose requests are in, and the deadlines of callers who say nothing.
import XCTest
@testable import Keygate
@testable import KeygateGatekeeper

final class GateCallerQueueTests: XCTestCase {
    private func caller(_ fd: Int32, uid: UInt32, deadline: Int = 1_000) -> GateCallerQueue.Caller {
        GateCallerQueue.Caller(fd: fd, uid: uid, pid: 100 + fd, deadline: deadline)
    }

    func test_aUserMayKeepOnlyItsShareWaiting_andOthersStillGetIn() {
        var queue = GateCallerQueue()
        for fd in 0..<Int32(GateCallerQueue.perUser) { XCTAssertTrue(queue.admit(caller(fd, uid: 1001))) }
        XCTAssertFalse(queue.admit(caller(50, uid: 1001)), "the flooding user's next caller is turned away")
        XCTAssertTrue(queue.admit(caller(51, uid: 1002)), "another user is not")
    }

    func test_amongReadyCallers_theUserServedLongestAgoGoesFirst() {
        var queue = GateCallerQueue()
        for fd in 1...4 { _ = queue.admit(caller(Int32(fd), uid: 1001)) }   // the flooder's callers came first
        _ = queue.admit(caller(9, uid: 1002))
        let ready: Set<Int32> = [1, 2, 3, 4, 9]
        XCTAssertEqual(queue.next(among: ready)?.fd, 1, "first come, while no one was served")
        XCTAssertEqual(queue.next(among: ready)?.fd, 9, "then the user not served yet, before the flooder's second")
        XCTAssertEqual(queue.next(among: ready)?.fd, 2)
        XCTAssertNil(queue.next(among: []), "a caller whose request has not arrived is not answered")
    }

    func test_aSilentCaller_leavesAtItsDeadline_andSetsTheSleep() {
        var queue = GateCallerQueue()
        _ = queue.admit(caller(3, uid: 1001, deadline: 250))
        _ = queue.admit(caller(4, uid: 1002, deadline: 400))
        XCTAssertEqual(queue.pollTimeout(now: 100, idle: 1000), 150)
        XCTAssertEqual(queue.expire(now: 300).map(\.fd), [3])
        XCTAssertEqual(queue.callers.map(\.fd), [4])
        XCTAssertEqual(GateCallerQueue().pollTimeout(now: 0, idle: 1000), 1000)
    }
}
