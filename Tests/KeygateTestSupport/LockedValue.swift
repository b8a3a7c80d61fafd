// A value behind a lock: the test support's few pieces of process-wide state (the staged
// tools folder, the pool of test users), used from XCTest's one thread but Sendable all the same.
import Foundation

final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
