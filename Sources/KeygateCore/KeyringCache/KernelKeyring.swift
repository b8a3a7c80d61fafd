// Thin typed wrappers over keyutils: one internal function per C call, each taking
// and returning a `KeySerial` and throwing a `KeyringErrno` that carries the errno.
// This is the only file in Keygate that talks to CKeyutils (libkeyutils). It retries
// on EINTR and frees (after wiping) every buffer keyutils allocates.
internal import CKeyutils
internal import Glibc

/// A kernel key or keyring serial number (`key_serial_t`), or one of the special
/// negative ids such as `@u` that the kernel resolves for the calling process.
struct KeySerial: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    let rawValue: Int32
    init(rawValue: Int32) { self.rawValue = rawValue }

    /// `@t`: this thread's keyring.
    static let threadKeyring = KeySerial(rawValue: -1)
    /// `@p`: this process's keyring, shared by its threads and gone when it exits.
    static let processKeyring = KeySerial(rawValue: -2)
    /// `@s`: the session keyring.
    static let sessionKeyring = KeySerial(rawValue: -3)
    /// `@u`: the keyring of the caller's uid, alive while any process of that uid is.
    static let userKeyring = KeySerial(rawValue: -4)

    var description: String { String(rawValue) }
}

/// A failed keyutils call: which call, and the errno it left.
struct KeyringErrno: Error, Equatable, Sendable, CustomStringConvertible {
    let call: String
    let code: Int32

    /// No such key, or it was invalidated (`ENOKEY`).
    var isNoKey: Bool { code == ENOKEY }
    /// The key's timeout passed; it stays listed until garbage collection (`EKEYEXPIRED`).
    var isExpired: Bool { code == EKEYEXPIRED }
    /// The key was revoked (`EKEYREVOKED`).
    var isRevoked: Bool { code == EKEYREVOKED }
    /// Permission denied: another uid's key, or a possessor-only key this process does not possess.
    var isAccessDenied: Bool { code == EACCES }
    /// The user's key quota (count or bytes) is full (`EDQUOT`).
    var isQuotaFull: Bool { code == EDQUOT }
    /// The system calls are missing or filtered, as under a container's seccomp profile.
    var isUnsupported: Bool { code == ENOSYS || code == EPERM }

    var description: String {
        let text = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return "\(call): \(text)"
    }
}

/// Kernel permission bits (`key_perm_t`). Possessor bits sit in the top byte,
/// then user, group and other.
struct KeyPermissions: OptionSet, Sendable, Hashable {
    let rawValue: UInt32
    static let possessorView = KeyPermissions(rawValue: 0x0100_0000)
    static let possessorRead = KeyPermissions(rawValue: 0x0200_0000)
    static let possessorWrite = KeyPermissions(rawValue: 0x0400_0000)
    static let possessorSearch = KeyPermissions(rawValue: 0x0800_0000)
    static let possessorLink = KeyPermissions(rawValue: 0x1000_0000)
    static let possessorSetAttr = KeyPermissions(rawValue: 0x2000_0000)

    /// view, read, write, search, link and setattr for the possessor; nothing for
    /// the owning user, group or others (0x3f000000).
    static let possessorOnly: KeyPermissions = [
        .possessorView, .possessorRead, .possessorWrite, .possessorSearch, .possessorLink, .possessorSetAttr,
    ]
}

/// What `keyctl_describe(3)` says about a key: "type;uid;gid;perm;description".
struct KeyDescription: Equatable, Sendable {
    let type: String
    let uid: UInt32
    let gid: UInt32
    let permissions: KeyPermissions
    let description: String

    /// Parses the kernel's "type;uid;gid;perm;description" line. The description is
    /// the rest after the fourth ';', so it may itself contain ';'.
    init?(parsing line: String) {
        let parts = line.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
        guard parts.count == 5,
              let uid = UInt32(parts[1]), let gid = UInt32(parts[2]),
              let perm = UInt32(parts[3], radix: 16)
        else { return nil }
        self.type = String(parts[0])
        self.uid = uid
        self.gid = gid
        self.permissions = KeyPermissions(rawValue: perm)
        self.description = String(parts[4])
    }
}

/// The keyutils calls Keygate uses. Each C name appears once, in the doc line.
enum KernelKeyring {
    /// Creates a key in `keyring`, or updates in place a key of the same type and
    /// description already directly in it (which also resets its expiry to never).
    /// The C function is `add_key(2)`.
    static func addKey(type: String, description: String, payload: UnsafeRawBufferPointer,
                       into keyring: KeySerial) throws(KeyringErrno) -> KeySerial {
        let serial = try retryingOnEINTR("add_key") {
            Int(add_key(type, description, payload.baseAddress, payload.count, keyring.rawValue))
        }
        return KeySerial(rawValue: Int32(truncatingIfNeeded: serial))
    }

    /// Searches `keyring` and the keyrings under it for a key this process may
    /// search, without linking the result anywhere. The C function is `keyctl_search(3)`.
    static func search(_ keyring: KeySerial, type: String, description: String) throws(KeyringErrno) -> KeySerial {
        let serial = try retryingOnEINTR("keyctl_search") {
            keyctl_search(keyring.rawValue, type, description, 0)
        }
        return KeySerial(rawValue: Int32(truncatingIfNeeded: serial))
    }

    /// Reads a key's payload into a temporary buffer, hands it to `body`, then wipes
    /// and frees the buffer. Copy what must outlive the call into `SecureBytes`.
    /// The C function is `keyctl_read_alloc(3)`.
    static func withPayload<R>(of key: KeySerial, _ body: (UnsafeRawBufferPointer) -> R) throws(KeyringErrno) -> R {
        // One read into a buffer on the stack, which a cached key's payload fits: keyctl_read_alloc
        // asks for the size first, a second system call on every read (keygate-secret-service
        // reads the master key on each GetSecrets, so that nothing opens after a lock).
        let small = 256
        let done = try withUnsafeTemporaryAllocation(byteCount: small, alignment: 16) { stack throws(KeyringErrno) -> R? in
            defer { Sodium.wipe(stack) }
            let count = try retryingOnEINTR("keyctl_read") {
                Int(keyctl_read(key.rawValue, stack.baseAddress?.assumingMemoryBound(to: CChar.self), small))
            }
            // The kernel returns the payload's whole size; a larger one than the buffer is read again below.
            guard count <= small else { return nil }
            return body(UnsafeRawBufferPointer(rebasing: stack[0..<count]))
        }
        if let done { return done }
        var buffer: UnsafeMutableRawPointer? = nil
        let count = try retryingOnEINTR("keyctl_read_alloc") {
            Int(keyctl_read_alloc(key.rawValue, &buffer))
        }
        let bytes = UnsafeMutableRawBufferPointer(start: buffer, count: buffer == nil ? 0 : count)
        let result = body(UnsafeRawBufferPointer(bytes))
        Sodium.wipe(bytes)
        free(buffer)
        return result
    }

    /// The serials directly linked in a keyring (its payload, read with `withPayload`).
    static func contents(of keyring: KeySerial) throws(KeyringErrno) -> [KeySerial] {
        try withPayload(of: keyring) { raw in
            let width = MemoryLayout<Int32>.size
            return stride(from: 0, to: raw.count - raw.count % width, by: width).map { offset in
                KeySerial(rawValue: raw.loadUnaligned(fromByteOffset: offset, as: Int32.self))
            }
        }
    }

    /// Type, owner, permissions and description of a key. The C function is
    /// `keyctl_describe_alloc(3)`.
    static func describe(_ key: KeySerial) throws(KeyringErrno) -> KeyDescription {
        var buffer: UnsafeMutablePointer<CChar>? = nil
        _ = try retryingOnEINTR("keyctl_describe_alloc") {
            Int(keyctl_describe_alloc(key.rawValue, &buffer))
        }
        let line = buffer.map { String(cString: $0) } ?? ""
        free(buffer)
        guard let parsed = KeyDescription(parsing: line) else {
            throw KeyringErrno(call: "keyctl_describe_alloc", code: EINVAL)
        }
        return parsed
    }

    /// Makes the key expire `seconds` from now (0 clears the timeout). The C function
    /// is `keyctl_set_timeout(3)`.
    static func setTimeout(_ key: KeySerial, seconds: UInt32) throws(KeyringErrno) {
        _ = try retryingOnEINTR("keyctl_set_timeout") { keyctl_set_timeout(key.rawValue, seconds) }
    }

    /// Replaces the key's permission mask. The C function is `keyctl_setperm(3)`.
    static func setPermissions(_ key: KeySerial, _ permissions: KeyPermissions) throws(KeyringErrno) {
        _ = try retryingOnEINTR("keyctl_setperm") { keyctl_setperm(key.rawValue, permissions.rawValue) }
    }

    /// Links `key` into `keyring`, displacing a key of the same type and description
    /// that was directly in it. The C function is `keyctl_link(3)`.
    static func link(_ key: KeySerial, into keyring: KeySerial) throws(KeyringErrno) {
        _ = try retryingOnEINTR("keyctl_link") { keyctl_link(key.rawValue, keyring.rawValue) }
    }

    /// Removes the link from `keyring` to `key`. The C function is `keyctl_unlink(3)`.
    static func unlink(_ key: KeySerial, from keyring: KeySerial) throws(KeyringErrno) {
        _ = try retryingOnEINTR("keyctl_unlink") { keyctl_unlink(key.rawValue, keyring.rawValue) }
    }

    /// Marks the key invalid at once: it leaves every keyring and reads give `ENOKEY`.
    /// The C function is `keyctl_invalidate(3)`.
    static func invalidate(_ key: KeySerial) throws(KeyringErrno) {
        _ = try retryingOnEINTR("keyctl_invalidate") { keyctl_invalidate(key.rawValue) }
    }

    /// The real serial behind a special id such as `@u`, creating that keyring when
    /// `create` is set. The C function is `keyctl_get_keyring_ID(3)`.
    static func keyringID(_ special: KeySerial, create: Bool) throws(KeyringErrno) -> KeySerial {
        let serial = try retryingOnEINTR("keyctl_get_keyring_ID") {
            Int(keyctl_get_keyring_ID(special.rawValue, create ? 1 : 0))
        }
        return KeySerial(rawValue: Int32(truncatingIfNeeded: serial))
    }

    /// Runs a keyutils call that returns -1 and sets errno on failure, again while
    /// it is interrupted by a signal.
    private static func retryingOnEINTR(_ call: String, _ body: () -> Int) throws(KeyringErrno) -> Int {
        let result = SafeFile.retryingOnEINTR {
            errno = 0
            return body()
        }
        if result >= 0 { return result }
        throw KeyringErrno(call: call, code: errno == 0 ? EIO : errno)
    }
}
