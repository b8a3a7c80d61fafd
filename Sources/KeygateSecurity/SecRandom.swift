// Apple's SecRandomCopyBytes: cryptographically secure random bytes, which wrappers use
// for salts, nonces and generated tokens. Delegates to Keygate's SecureBytes.random
// (libsodium's randombytes, the kernel's getrandom underneath).
internal import Keygate

/// Apple's `SecRandomRef`: only `kSecRandomDefault` exists.
public final class SecRandom: Sendable {
    private init() {}
}

/// Apple's default generator (nil-equivalent; passing nil is the same).
public let kSecRandomDefault: SecRandom? = nil

/// Apple's `SecRandomCopyBytes`: fills `count` bytes at `bytes` and returns errSecSuccess,
/// or errSecAllocate when locked memory for them cannot be had.
public func SecRandomCopyBytes(_ rnd: SecRandom?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count > 0 else { return errSecSuccess }
    do {
        let random = try SecureBytes.random(count: count)
        random.withUnsafeBytes { src in
            if let base = src.baseAddress { bytes.copyMemory(from: base, byteCount: count) }
        }
        return errSecSuccess
    } catch {
        return errSecAllocate
    }
}
