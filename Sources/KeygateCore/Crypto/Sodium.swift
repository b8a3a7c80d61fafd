// libsodium start-up and the few primitives every other crypto file shares.
// Every libsodium call in Keygate lives under Crypto/.
internal import CSodium

package enum Sodium {
    /// `sodium_init()` is idempotent and thread-safe; call it before any other use.
    static func ensureInitialized() throws {
        if sodium_init() < 0 {
            throw KeychainError.notAvailable("libsodium could not initialise (no entropy source?): check that /dev/urandom is readable")
        }
    }

    /// Fills the buffer with cryptographically secure random bytes (`randombytes_buf(3)`).
    static func randomFill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        randombytes_buf(base, buffer.count)
    }

    package static func randomBytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randomFill($0) }
        return out
    }

    /// Zeroes memory in a way the compiler cannot elide (`sodium_memzero(3)`).
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        sodium_memzero(base, buffer.count)
    }

    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { wipe($0) }
    }
}

extension Sodium {
    /// Equal length and equal bytes, in time that does not depend on where they differ.
    package static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in sodium_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }
}
