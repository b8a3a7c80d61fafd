// The bytes Keygate puts in a cached key: an 8-byte big-endian expiry (unix
// seconds, 0 = none) followed by the key itself. The kernel timeout does the
// enforcing; the expiry lets `keygate status` show seconds left. Pure code: the
// key bytes move only between locked buffers (SecureBytes).

/// A key read back from the cache.
package struct CachedKey: Sendable {
    package let key: SecureBytes
    /// Unix seconds when the cache drops it; nil when it has no timeout.
    package let expiresAt: UInt64?
}

enum KeyCachePayload {
    /// Bytes before the key.
    static let headerSize = 8

    /// Header then key, in locked memory.
    static func encode(key: SecureBytes, expiresAt: UInt64?) throws -> SecureBytes {
        let out = try SecureBytes(count: headerSize + key.count)
        out.withUnsafeMutableBytes { dst in
            dst.storeBytes(of: (expiresAt ?? 0).bigEndian, toByteOffset: 0, as: UInt64.self)
            key.withUnsafeBytes { src in
                guard let base = src.baseAddress, src.count > 0 else { return }
                UnsafeMutableRawBufferPointer(rebasing: dst[headerSize...]).copyMemory(
                    from: UnsafeRawBufferPointer(start: base, count: src.count))
            }
        }
        return out
    }

    /// What the header says.
    struct Header: Equatable, Sendable {
        /// Unix seconds; nil = no timeout.
        let expiresAt: UInt64?
    }

    /// The header, or nil for a payload too short to be ours. Reads no key bytes.
    static func header(of payload: UnsafeRawBufferPointer) -> Header? {
        guard payload.count >= headerSize else { return nil }
        let raw = UInt64(bigEndian: payload.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        return Header(expiresAt: raw == 0 ? nil : raw)
    }

    /// Splits a payload into expiry and key (copied into locked memory). nil for a
    /// payload too short to be ours, or when locked memory runs out.
    static func decode(_ payload: UnsafeRawBufferPointer) -> CachedKey? {
        guard let header = header(of: payload) else { return nil }
        let keyBytes = UnsafeRawBufferPointer(rebasing: payload[headerSize...])
        guard let key = try? SecureBytes(copying: keyBytes) else { return nil }
        return CachedKey(key: key, expiresAt: header.expiresAt)
    }
}
