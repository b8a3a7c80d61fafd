// Bytes that hold a secret: allocated with `sodium_malloc` (mlocked, guarded, and
// excluded from core dumps), small ones in a slot of its locked chunks (LockedArena),
// zeroed and freed in deinit. Passwords, master and class
// keys and plaintext secrets live here from the moment they enter the process.
internal import CSodium

public final class SecureBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only during initialisation; afterwards it is
    // read-only, so sharing across threads is safe.
    private let pointer: UnsafeMutableRawPointer?
    public let count: Int
    /// A slot of LockedArena (small secrets), else its own sodium_malloc allocation.
    private let inArena: Bool

    /// Allocates `count` zeroed bytes of locked memory.
    public init(count: Int) throws {
        try Sodium.ensureInitialized()
        self.count = max(0, count)
        if self.count == 0 {
            pointer = nil
            inArena = false
            return
        }
        if let slot = LockedArena.allocate(self.count) {
            pointer = slot
            inArena = true
            return
        }
        guard let p = sodium_malloc(self.count) else {
            throw KeychainError.notAvailable("could not allocate \(count) bytes of locked memory: raise the memlock limit (ulimit -l)")
        }
        sodium_memzero(p, self.count)
        pointer = p
        inArena = false
    }

    /// Copies the bytes into locked memory. The caller wipes its own copy.
    public convenience init(copying bytes: UnsafeRawBufferPointer) throws {
        try self.init(count: bytes.count)
        if let dst = pointer, let src = bytes.baseAddress, bytes.count > 0 {
            dst.copyMemory(from: src, byteCount: bytes.count)
        }
    }

    /// Copies the array into locked memory, then wipes the array.
    public convenience init(consuming bytes: inout [UInt8]) throws {
        try self.init(count: bytes.count)
        if let dst = pointer {
            bytes.withUnsafeBytes { src in
                if let base = src.baseAddress { dst.copyMemory(from: base, byteCount: src.count) }
            }
        }
        Sodium.wipe(&bytes)
    }

    /// `count` cryptographically random bytes.
    public static func random(count: Int) throws -> SecureBytes {
        let out = try SecureBytes(count: count)
        out.withUnsafeMutableBytes { Sodium.randomFill($0) }
        return out
    }

    deinit {
        guard let p = pointer else { return }
        if inArena {
            LockedArena.release(p)   // zeroes the slot
        } else {
            sodium_free(p)   // sodium_free zeroes before unmapping
        }
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    package func withUnsafeMutableBytes<R>(_ body: (UnsafeMutableRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeMutableRawBufferPointer(start: pointer, count: count))
    }

    /// Constant-time comparison (`sodium_memcmp(3)`).
    public func constantTimeEquals(_ other: SecureBytes) -> Bool {
        guard count == other.count else { return false }
        guard count > 0, let a = pointer, let b = other.pointer else { return true }
        return sodium_memcmp(a, b, count) == 0
    }

    /// A new buffer holding bytes [from, from+length).
    package func slice(from: Int, length: Int) throws -> SecureBytes {
        guard from >= 0, length >= 0, from + length <= count else {
            throw KeychainError.decode("internal: slice out of range")
        }
        let out = try SecureBytes(count: length)
        if length > 0, let src = pointer {
            out.withUnsafeMutableBytes { dst in
                dst.baseAddress?.copyMemory(from: src + from, byteCount: length)
            }
        }
        return out
    }

    /// A copy as an ordinary array: only for data that leaves the process anyway
    /// (for example the bytes written to stdout by `keygate get`). Wipe it after use.
    public func unprotectedCopy() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }
}
