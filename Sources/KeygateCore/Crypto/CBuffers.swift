// libsodium marks most buffer arguments nonnull, but an empty Swift buffer has no base
// address. These helpers hand libsodium a real pointer in every case (one scratch
// byte for an empty buffer, which libsodium never reads or writes at length 0).

extension UnsafeRawBufferPointer {
    func withNonNullBytes<R>(_ body: (UnsafePointer<UInt8>) throws -> R) rethrows -> R {
        if let base = baseAddress { return try body(base.bindMemory(to: UInt8.self, capacity: count)) }
        var scratch: UInt8 = 0
        return try withUnsafePointer(to: &scratch) { try body($0) }
    }
}

extension UnsafeMutableRawBufferPointer {
    func withNonNullBytes<R>(_ body: (UnsafeMutablePointer<UInt8>) throws -> R) rethrows -> R {
        if let base = baseAddress { return try body(base.bindMemory(to: UInt8.self, capacity: count)) }
        var scratch: UInt8 = 0
        return try withUnsafeMutablePointer(to: &scratch) { try body($0) }
    }
}
