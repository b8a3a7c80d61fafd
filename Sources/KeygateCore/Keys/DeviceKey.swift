// The device key for one user on this host: keyed BLAKE2b of the uid and the
// machine-id under the root-only host key (HostKey). this-device-only class keys
// are derived from it, so those items open only on the host that sealed them.
// Root derives it directly; any other user finds it in the kernel keyring (KeyCache
// name "device"), where pam_keygate's session hook put it at login. Hashing is
// delegated to GenericHash.

package enum DeviceKey {
    /// The KeyCache name the PAM session hook stores the device key under.
    static let cacheName = "device"

    /// The device key's length in bytes.
    static let byteCount = 32

    /// Domain separation: the first bytes of the hashed message.
    static let label = Array("keygate-device-v1".utf8)

    /// Where the machine-id is read from, in order.
    static let machineIDPaths = ["/etc/machine-id", "/var/lib/dbus/machine-id"]

    /// BLAKE2b-256(key: host key, message: "keygate-device-v1" || uid (4 bytes, big-endian) || machine-id
    /// (its 32 lowercase hex characters, as ASCII)). `.param` for a host key that is not 32 bytes or a
    /// machine-id that is not 32 hex characters.
    static func derive(hostKey: SecureBytes, uid: UInt32, machineID: String) throws -> SecureBytes {
        try derive(label: label, hostKey: hostKey, uid: uid, machineID: machineID)
    }

    /// The same derivation under another domain `label` (the host protector's key uses
    /// "keygate-host-protector-v1"): BLAKE2b-256(key: host key, message: label || uid (4 bytes,
    /// big-endian) || machine-id). Distinct labels give independent keys.
    static func derive(label: [UInt8], hostKey: SecureBytes, uid: UInt32, machineID: String) throws -> SecureBytes {
        guard hostKey.count == HostKey.byteCount else {
            throw KeychainError.param("internal: the host key must be \(HostKey.byteCount) bytes, not \(hostKey.count)")
        }
        guard isMachineID(machineID) else {
            throw KeychainError.param("""
                the machine-id must be 32 lowercase hex characters: run `systemd-machine-id-setup` (or `dbus-uuidgen --ensure`) to \
                give this host one
                """)
        }
        var message = label
        message += [UInt8(truncatingIfNeeded: uid >> 24), UInt8(truncatingIfNeeded: uid >> 16),
                    UInt8(truncatingIfNeeded: uid >> 8), UInt8(truncatingIfNeeded: uid)]
        message += Array(machineID.utf8)
        let input = try SecureBytes(consuming: &message)
        // GenericHash takes its key as an array: this copy lives only for the call and is wiped at once.
        var key = hostKey.unprotectedCopy()
        defer { Sodium.wipe(&key) }
        return try GenericHash.hash(input, key: key, outputBytes: byteCount)
    }

    /// This host's machine-id: /etc/machine-id, else /var/lib/dbus/machine-id. `.notAvailable` when neither
    /// holds one.
    static func machineID() throws -> String {
        try machineID(candidates: machineIDPaths)
    }

    /// The first of `candidates` that holds a machine-id (32 hex characters, then an optional newline),
    /// lowercased. An absent, empty or "uninitialized" file is skipped.
    static func machineID(candidates: [String]) throws -> String {
        for path in candidates {
            guard let bytes = try? AtomicFile.read(path, maxBytes: 64) else { continue }
            var text = String(decoding: bytes, as: UTF8.self)
            while let last = text.last, last == "\n" || last == " " || last == "\r" { text.removeLast() }
            text = text.lowercased()
            if isMachineID(text) { return text }
        }
        throw KeychainError.notAvailable("""
            this host has no machine-id (looked in \(candidates.joined(separator: " and "))): run `sudo \
            systemd-machine-id-setup` (or `sudo dbus-uuidgen --ensure`) to create one
            """)
    }

    /// The device key for the calling user, or nil when it is unavailable. Root (uid 0) derives it from
    /// the host key; any other user reads it from the kernel keyring, where pam_keygate's session hook
    /// handed it over at login. Never throws: callers show `unavailableAdvice(uid:)` when it is nil.
    static func forCurrentUser(uid: UInt32, environment: KeygateEnvironment) -> SecureBytes? {
        if uid == 0 {
            return try? deriveFromHost(uid: 0, environment: environment)
        }
        guard let cached = KeyCache(uid: uid).load(cacheName), cached.key.count == byteCount else { return nil }
        return cached.key
    }

    /// The device key for `uid`, derived from this host's key and machine-id (root only: this is what
    /// pam_keygate's session hook hands over). nil when the host has no host key.
    package static func deriveFromHost(uid: UInt32, environment: KeygateEnvironment) throws -> SecureBytes? {
        guard let hostKey = try HostKey.read(environment: environment) else { return nil }
        return try derive(hostKey: hostKey, uid: uid, machineID: machineID())
    }

    /// What to tell someone whose this-device-only item needs the device key when there is none.
    static func unavailableAdvice(uid: UInt32, environment: KeygateEnvironment) -> String {
        if uid == 0 {
            // Only on this error path: read again to say why (a TPM that no longer opens the sealed key,
            // a file with the wrong mode, no machine-id) rather than "no host key".
            do {
                if try HostKey.read(environment: environment) != nil { _ = try machineID() }
            } catch let error as KeychainError {
                return error.message
            } catch {}
            return "this host has no host key: run `sudo keygate setup-host`"
        }
        return "this-device-only items need the device key, which pam_keygate hands over at login: enable pam_keygate (see README), or log in again"
    }

    private static func isMachineID(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
