// The host secret only root can read: /var/lib/keygate/host.key, 32 random bytes,
// mode 0400, owner root, in a root-only 0700 folder. DeviceKey derives each user's
// device key from it, so a copy of the store taken to another host cannot open
// this-device-only items. Writing delegates to AtomicFile (temporary file, fsync,
// rename or link, never through a symbolic link); reading is done here, straight
// into locked memory, with the checks a key file needs. Where the key is sealed to
// a TPM (host.key.tpm beside it, `setup-host --tpm`), reading, creating and
// rotating delegate to HostKey+TPM.swift.

/// The host secret only root can read: /var/lib/keygate/host.key, 32 random bytes, mode 0400, owner root,
/// folder /var/lib/keygate 0700 root. In test-hook builds the path can be redirected with
/// KEYGATE_TEST_HOST_KEY (TestHooks.hostKey); release builds always use the fixed path.
public enum HostKey {
    /// The fixed location in release builds.
    static let defaultPath = "/var/lib/keygate/host.key"

    /// The key's length in bytes.
    static let byteCount = 32

    /// The advice for a caller that is not root.
    static let runAsRoot = "run as root: sudo keygate setup-host"

    /// Where the host key lives: the fixed path, or (test-hook builds) an absolute KEYGATE_TEST_HOST_KEY
    /// in the environment the caller passes down.
    public static func path(_ environment: KeygateEnvironment) -> String {
        environment.testHooks.hostKey ?? defaultPath
    }

    /// Creates the host key if it is absent. Returns true if it created one, false if a valid one was
    /// already there. Throws `.param` when not root, and a clear error when the path is a symbolic link,
    /// is not owned by root, or holds a file that is not a valid host key.
    public static func create(environment: KeygateEnvironment) throws -> Bool {
        try create(at: path(environment), environment: environment)
    }

    /// Replaces the host key with a fresh one (atomically), or creates it if absent. Items sealed for a
    /// device key derived from the old host key become unreadable ("invalidated"). No copy of the old key
    /// is kept: its file is overwritten with zeros (best effort) once the new one is in place.
    public static func rotate(environment: KeygateEnvironment) throws {
        try rotate(at: path(environment), environment: environment)
    }

    /// The host key, or nil when there is none. Root only. The file must be a regular, root-owned file of
    /// mode 0400 or 0600 holding exactly 32 bytes; anything else is an error naming the path and the fix.
    static func read(environment: KeygateEnvironment) throws -> SecureBytes? {
        try read(at: path(environment), environment: environment)
    }

    // MARK: - Path-explicit forms (the public ones pass `path`; tests pass a temporary one)

    static func create(at path: String, environment: KeygateEnvironment) throws -> Bool {
        try requireRoot(path)
        try prepareFolder(of: path)
        // A TPM-sealed key counts as present once it opens (a TPM that no longer opens it is an error).
        if try existingEntry(at: sealedPath(for: path)) {
            _ = try read(at: path, environment: environment)
            return false
        }
        // A present key is validated, not trusted blindly (a wrong mode or size is an error).
        if try existingEntry(at: path), try read(at: path, environment: environment) != nil { return false }
        do {
            try writeFreshKey(to: path, replace: false)
        } catch let error as KeychainError where error.code == .duplicateItem {
            // Another setup-host made it at the same moment: check it like any present key.
            _ = try read(at: path, environment: environment)
            return false
        }
        return true
    }

    static func rotate(at path: String, environment: KeygateEnvironment) throws {
        try requireRoot(path)
        try prepareFolder(of: path)
        // A TPM-sealed key is rotated inside the TPM: it stays sealed.
        if try existingEntry(at: sealedPath(for: path)) {
            _ = try sealToTPM(at: path, tcti: nil, rotate: true, environment: environment)
            return
        }
        _ = try existingEntry(at: path)
        // Opened before the rename, so that the old key's blocks can be overwritten afterwards.
        let old = openOldKeyForScrubbing(path)
        try writeFreshKey(to: path, replace: true)
        if let old { scrubAndClose(old) }
    }

    static func read(at path: String, environment: KeygateEnvironment) throws -> SecureBytes? {
        try requireRoot(path)
        if let sealed = try readSealed(at: path, environment: environment) { return sealed }
        return try readPlain(at: path)
    }

    /// The plain key file alone (no TPM): root-owned, 0400 or 0600, 32 bytes. nil when absent.
    static func readPlain(at path: String) throws -> SecureBytes? {
        try requireRoot(path)
        // Never through a link; a FIFO planted at the path must not hang sshd's session hook.
        let file: OpenFile
        switch SafeFile.openForReading(path) {
        case .success(let opened): file = opened
        case .failure(let e) where e == .noEntry || e == .notDirectory: return nil
        case .failure(let e): throw failure(e.code, path, "open")
        }
        defer { file.close() }
        try check(file.status, path)

        let key = try SecureBytes(count: byteCount)
        let filled = try key.withUnsafeMutableBytes { raw in
            switch SafeFile.readFully(file.fd, into: raw) {
            case .success(let count): return count
            case .failure(let e): throw failure(e.code, path, "read")
            }
        }
        guard filled == byteCount else { throw wrongSize(path, Int(filled)) }
        return key
    }

    // MARK: - Implementation (internal: HostKey+TPM.swift shares the checks)

    static func requireRoot(_ path: String) throws {
        guard ProcessIdentity.euid == 0 else {
            throw KeychainError.param("the host key (\(path)) belongs to root: \(runAsRoot)")
        }
    }

    /// Makes the key's folder (0700, root) if missing. An existing folder must be a real folder owned by
    /// root that nobody else can write to; a readable one is narrowed to 0700.
    static func prepareFolder(of path: String) throws {
        let folder = parent(of: path)
        if case .success(let info) = FileStatus.of(folder, links: .refuse) {
            guard info.isDirectory else {
                throw KeychainError.notAvailable("""
                    \(folder) is not a folder (or is a symbolic link): the host key lives only in a real root-owned folder; move it \
                    aside and run `sudo keygate setup-host` again
                    """)
            }
            guard info.uid == 0 else {
                throw KeychainError.notAvailable("""
                    \(folder) belongs to uid \(info.uid), not root: the host key lives only in a root-only folder; run `sudo chown \
                    root:root \(folder) && sudo chmod 0700 \(folder)`
                    """)
            }
            guard info.mode & 0o022 == 0 else {
                throw KeychainError.notAvailable("""
                    \(folder) can be written by other users (mode \(octal(info.mode))): the host key lives only in a \
                    root-only folder; run `sudo chmod 0700 \(folder)`, or keep the key in /var/lib/keygate
                    """)
            }
        }
        try PrivateDirectory.make(folder)
    }

    /// Whether something is at `path`. A symbolic link or a file not owned by root is refused.
    static func existingEntry(at path: String) throws -> Bool {
        let info: FileStatus
        switch FileStatus.of(path, links: .refuse) {
        case .success(let status): info = status
        case .failure(.noEntry): return false
        case .failure(let e): throw failure(e.code, path, "inspect")
        }
        if info.isSymbolicLink {
            throw KeychainError.notAvailable("""
                \(path) is a symbolic link, and Keygate does not follow links for the host key: remove the link, then run `sudo \
                keygate setup-host`
                """)
        }
        guard info.uid == 0 else {
            throw KeychainError.notAvailable("""
                \(path) belongs to uid \(info.uid), not root, so it cannot be trusted as the host key: remove it, then run `sudo \
                keygate setup-host` (this-device-only items sealed for it will be invalidated)
                """)
        }
        return true
    }

    /// The checks a host key file must pass: regular, owned by root, 0400 or 0600, exactly 32 bytes.
    static func check(_ info: FileStatus, _ path: String) throws {
        guard info.isRegular else {
            throw KeychainError.notAvailable("\(path) is not a regular file: remove it, then run `sudo keygate setup-host`")
        }
        guard info.uid == 0 else {
            throw KeychainError.notAvailable("""
                \(path) belongs to uid \(info.uid), not root, so it cannot be trusted as the host key: remove it, then run `sudo \
                keygate setup-host` (this-device-only items sealed for it will be invalidated)
                """)
        }
        let mode = info.mode
        guard mode == 0o400 || mode == 0o600 else {
            throw KeychainError.notAvailable("""
                \(path) has mode \(octal(mode)); the host key must be readable by root only: run `sudo chmod 0400 \(path)`, and \
                `sudo keygate setup-host --rotate` if others may have read it
                """)
        }
        guard info.size == byteCount else { throw wrongSize(path, info.size) }
    }

    /// Writes 32 fresh random bytes to `path`, mode 0400, through a temporary file in the same folder.
    private static func writeFreshKey(to path: String, replace: Bool) throws {
        let key = try SecureBytes.random(count: byteCount)
        // AtomicFile takes an array: this copy lives only for the write and is wiped at once.
        var bytes = key.unprotectedCopy()
        defer { Sodium.wipe(&bytes) }
        if replace {
            try AtomicFile.write(bytes, to: path, mode: 0o400)
        } else {
            try AtomicFile.create(bytes, at: path, mode: 0o400)
        }
    }

    /// A write descriptor on the current key file, if it is a regular file of a plausible size.
    static func openOldKeyForScrubbing(_ path: String) -> (fd: Int32, size: Int)? {
        let fd = SafeFile.open(path, .writeOnly | .nonBlocking)
        guard fd >= 0 else { return nil }
        guard case .success(let info) = FileStatus.of(descriptor: fd), info.isRegular, info.size <= 4096 else {
            Descriptor.close(fd)
            return nil
        }
        return (fd, info.size)
    }

    /// Overwrites the replaced (now unlinked) key file with zeros and syncs it: best effort, since a
    /// copy-on-write or journaling file system may keep the old blocks anyway.
    static func scrubAndClose(_ old: (fd: Int32, size: Int)) {
        SafeFile.writeAll(old.fd, [UInt8](repeating: 0, count: old.size), at: 0)
        Descriptor.sync(old.fd)
        Descriptor.close(old.fd)
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let folder = String(path[..<slash])
        return folder.isEmpty ? "/" : folder
    }

    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static func wrongSize(_ path: String, _ size: Int) -> KeychainError {
        .decode("""
            \(path) holds \(size) bytes, not \(byteCount): it is not a Keygate host key (corrupt or replaced); run `sudo \
            keygate setup-host --rotate` to make a new one (this-device-only items sealed for the old one will be invalidated)
            """)
    }

    static func failure(_ code: Int32, _ path: String, _ action: String) -> KeychainError {
        let error = SystemErrno(code: code)
        if error == .symbolicLink {
            return .notAvailable("""
                \(path) is a symbolic link, and Keygate does not follow links for the host key: remove the link, then run `sudo \
                keygate setup-host`
                """)
        }
        let reason = error.text
        if error == .accessDenied || error == .notPermitted {
            return .param("could not \(action) \(path): \(reason); \(runAsRoot)")
        }
        return .notAvailable("could not \(action) \(path): \(reason); check the disk and that \(parent(of: path)) is a root-only folder (0700)")
    }
}
