// Keygate's cache of unlocked keys in the kernel keyring, like sudo's timestamp:
// each key is a possessor-only "user" key named "keygate:<uid>:<name>" under the
// user keyring @u, with a kernel timeout. Delegates the system calls to
// KernelKeyring and the payload layout to KeyCachePayload.
import Synchronization

/// One cached key as `keygate status` shows it: never its bytes.
package struct CacheEntry: Sendable, Equatable {
    package let name: String
    /// nil = no timeout.
    package let secondsLeft: UInt64?
}

package struct KeyCache: Sendable {
    /// The kernel key type of every cached key.
    static let keyType = "user"

    let uid: UInt32

    /// Keys are named "keygate:<uid>:<name>" (type "user") under the user keyring @u.
    package init(uid: UInt32 = ProcessIdentity.uid) {
        self.uid = uid
    }

    /// Every description of ours starts with this.
    var prefix: String { "keygate:\(uid):" }

    /// Caches `key` under `name` for `timeout` seconds (0 = no timeout), replacing an
    /// older key of that name.
    ///
    /// A key never sits under @u without its timeout, even if the process dies half
    /// way: it is made in this process's keyring (which dies with the process),
    /// restricted to its possessor, given its timeout, and only then linked into @u
    /// and unlinked from the process keyring. Throws `.notAvailable` on any failure
    /// (callers treat caching as best-effort) and `.param` for an unusable name.
    package func store(_ name: String, key: SecureBytes, timeout: UInt32) throws {
        let description = try self.description(of: name)
        let expiresAt: UInt64? = timeout == 0 ? nil : Self.now() + UInt64(timeout)
        let payload = try KeyCachePayload.encode(key: key, expiresAt: expiresAt)
        // The process keyring is shared by all threads: a second add_key of the same
        // description there would update the staged key in place and clear its timeout.
        try Self.stagingLock.withLock { _ throws(KeychainError) in
            do throws(KeyringErrno) {
                try Self.stageAndPublish(description: description, payload: payload, timeout: timeout)
            } catch {
                throw Self.cachingFailed(error)
            }
        }
    }

    /// The key cached under `name`, or nil if it is absent, expired, revoked or
    /// invalidated (or cannot be read). The bytes go straight into locked memory.
    package func load(_ name: String) -> CachedKey? {
        guard let description = try? self.description(of: name) else { return nil }
        do throws(KeyringErrno) {
            let serial = try KernelKeyring.search(.userKeyring, type: Self.keyType, description: description)
            let cached = try Self.possessing { () throws(KeyringErrno) in
                try KernelKeyring.withPayload(of: serial, KeyCachePayload.decode)
            }
            guard let cached else { return nil }
            // The kernel enforces the timeout; this only covers the second it rounds.
            if let expiresAt = cached.expiresAt, expiresAt <= Self.now() { return nil }
            return cached
        } catch {
            return nil  // ENOKEY, EKEYEXPIRED, EKEYREVOKED, EACCES: not cached for us
        }
    }

    /// Drops the key cached under `name` (`keyctl_invalidate`). True if one was there.
    @discardableResult
    package func evict(_ name: String) -> Bool {
        guard let description = try? self.description(of: name) else { return false }
        do throws(KeyringErrno) {
            let serial = try KernelKeyring.search(.userKeyring, type: Self.keyType, description: description)
            try Self.possessing { () throws(KeyringErrno) in try KernelKeyring.invalidate(serial) }
            return true
        } catch {
            return false
        }
    }

    /// Drops every "keygate:<uid>:" key under @u; returns how many. Keys whose
    /// timeout already passed cannot be described any more; the kernel reaps them.
    @discardableResult
    package func evictAll() -> Int {
        var dropped = 0
        for serial in ours() {
            do throws(KeyringErrno) {
                try Self.possessing { () throws(KeyringErrno) in try KernelKeyring.invalidate(serial.serial) }
                dropped += 1
            } catch {
                continue  // expired or already gone since it was listed
            }
        }
        return dropped
    }

    /// What is cached now, sorted by name: names and seconds left, never key bytes.
    package func entries() -> [CacheEntry] {
        let now = Self.now()
        var result: [CacheEntry] = []
        for key in ours() {
            // `try?` flattens: nil when expired, gone, or too short to be ours.
            guard let header = try? Self.possessing({ () throws(KeyringErrno) in
                try KernelKeyring.withPayload(of: key.serial, KeyCachePayload.header)
            }) else { continue }
            var secondsLeft: UInt64? = nil
            if let expiresAt = header.expiresAt {
                guard expiresAt > now else { continue }
                secondsLeft = expiresAt - now
            }
            result.append(CacheEntry(name: key.name, secondsLeft: secondsLeft))
        }
        return result.sorted { $0.name < $1.name }
    }

    // MARK: - Internals

    private static let stagingLock = Mutex<Void>(())

    /// The kernel allows descriptions up to 4095 bytes.
    private static let maxDescriptionBytes = 4095

    /// "keygate:<uid>:<name>", or `.param` when the kernel could not hold it.
    func description(of name: String) throws -> String {
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw KeychainError.param("a key cache name must be non-empty text without NUL bytes: pass the item's class or scope name")
        }
        let description = prefix + name
        guard description.utf8.count <= Self.maxDescriptionBytes else {
            throw KeychainError.param("the key cache name is \(name.utf8.count) bytes long; the kernel keyring allows about 4000: use a shorter name")
        }
        return description
    }

    /// Serials and names of our keys directly under @u that can still be described.
    private func ours() -> [(serial: KeySerial, name: String)] {
        let serials = (try? Self.possessing { () throws(KeyringErrno) in
            try KernelKeyring.contents(of: .userKeyring)
        }) ?? []
        return serials.compactMap { serial in
            guard let info = try? Self.possessing({ () throws(KeyringErrno) in try KernelKeyring.describe(serial) }),
                  info.type == Self.keyType, info.description.hasPrefix(prefix)
            else { return nil }
            return (serial, String(info.description.dropFirst(prefix.count)))
        }
    }

    /// The ordered steps of `store`, under the staging lock.
    private static func stageAndPublish(description: String, payload: SecureBytes,
                                        timeout: UInt32) throws(KeyringErrno) {
        let staged = try payload.withUnsafeBytes { bytes in
            Result { () throws(KeyringErrno) in
                try KernelKeyring.addKey(type: keyType, description: description, payload: bytes, into: .processKeyring)
            }
        }.get()
        do throws(KeyringErrno) {
            try KernelKeyring.setPermissions(staged, .possessorOnly)
            if timeout > 0 { try KernelKeyring.setTimeout(staged, seconds: timeout) }
            try KernelKeyring.link(staged, into: .userKeyring)
        } catch {
            try? KernelKeyring.invalidate(staged)  // never leave a half-made key behind
            throw error
        }
        // Published. Failing to unlink here leaves only a link that dies with the process.
        // The displaced key needs no invalidation: possessor-only and no longer in any
        // keyring, nobody can reach it (root gets EACCES too), and the kernel frees it,
        // wiping the payload, as soon as its last reference goes.
        try? KernelKeyring.unlink(staged, from: .processKeyring)
    }

    /// Runs `body`, and once more after making @u's keys possessed by this process
    /// if the kernel refused it with EACCES.
    ///
    /// Keys found through `@u` are possessed, but a call on a bare serial checks
    /// possession by searching this process's thread, process and session keyrings.
    /// A session keyring not linked to @u (`keyctl session -`, some container
    /// runtimes) makes possessor-only keys unreadable by serial. Linking @u into the
    /// process keyring fixes that for this process only, and dies with it.
    private static func possessing<R>(_ body: () throws(KeyringErrno) -> R) throws(KeyringErrno) -> R {
        do throws(KeyringErrno) {
            return try body()
        } catch where error.isAccessDenied {
            try KernelKeyring.link(.userKeyring, into: .processKeyring)
            return try body()
        }
    }

    /// Unix seconds now, on the same clock as kernel key expiry.
    package static func now() -> UInt64 {
        UInt64(max(0, WallClock.seconds))
    }

    /// The `.notAvailable` error for a failed store, naming the cause and what to do.
    static func cachingFailed(_ error: KeyringErrno) -> KeychainError {
        if error.isQuotaFull {
            return .notAvailable("""
                the kernel keyring quota is full (\(error)): run `keygate lock --all` or raise /proc/sys/kernel/keys/maxbytes and \
                maxkeys
                """)
        }
        if error.isUnsupported {
            return .notAvailable("""
                the kernel keyring cannot be used here (\(error)), as under a container's default seccomp profile: allow the \
                add_key and keyctl system calls, or set reuse-duration to 0
                """)
        }
        if error.isAccessDenied {
            return .notAvailable("""
                the kernel refused access to the user keyring (\(error)): run keygate as the user who owns the keys, in a session \
                whose keyring reaches the user keyring (pam_keyinit)
                """)
        }
        return .notAvailable("""
            could not cache the key in the kernel keyring (\(error)): Keygate will ask again next time; `keyctl show @u` shows \
            the keyring
            """)
    }
}
