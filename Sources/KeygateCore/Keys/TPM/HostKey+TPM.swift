// The host key sealed to a TPM2: host.key.tpm beside host.key's path (so
// /var/lib/keygate/host.key.tpm, root, 0400), and then no plaintext host.key.
// `setup-host --tpm` seals a fresh key, or moves an existing file key into the TPM
// without risking it (seal, check that the TPM gives back the same bytes, write the
// sealed file atomically, read it back, and only then scrub and remove the plain
// file). Reading unseals into locked memory. TPM work is TPMSealing's, the file
// layout SealedHostKeyFile's, the TPM choice TPMTCTI's.

extension HostKey {
    /// What `setup-host --tpm` did.
    public enum TPMSetupOutcome: Equatable, Sendable {
        /// A fresh host key was made and sealed.
        case created
        /// The existing file key was sealed and the plain file removed.
        case migrated
        /// The key was already sealed (and opens): nothing to do.
        case alreadySealed
        /// The sealed key now opens through another TCTI, recorded in the file.
        case retargeted
        /// A fresh key replaced the old one (this-device-only items are invalidated).
        case rotated
    }

    /// Where the sealed form of the host key lives (host.key.tpm next to `path`).
    public static func sealedPath(_ environment: KeygateEnvironment) -> String { sealedPath(for: path(environment)) }

    /// Seals the host key to the TPM at `tcti` (default: the kernel's resource manager; test-hook builds
    /// also read KEYGATE_TEST_TCTI). See TPMSetupOutcome. Root only; `.notAvailable` with advice when no
    /// TPM answers, in which case nothing on disk changes.
    public static func sealToTPM(tcti: String?, rotate: Bool, environment: KeygateEnvironment) throws -> TPMSetupOutcome {
        try sealToTPM(at: path(environment), tcti: tcti, rotate: rotate, environment: environment)
    }

    /// Whether the host key is sealed to a TPM (its sealed file exists; root can see it).
    public static func isSealed(_ environment: KeygateEnvironment) -> Bool { AtomicFile.exists(sealedPath(environment)) }

    // MARK: - Path-explicit forms

    package static func sealedPath(for path: String) -> String { path + ".tpm" }

    /// The unsealed host key when `path`'s sealed file exists; nil when it does not.
    static func readSealed(at path: String, environment: KeygateEnvironment) throws -> SecureBytes? {
        let sealed = sealedPath(for: path)
        guard let file = try readSealedFile(at: sealed) else { return nil }
        let connection = try TPMConnection(TPMTCTI.forUnsealing(recorded: file.tcti, environment: environment))
        let key = try TPMSealing.unseal(file.object, on: connection, what: sealed)
        guard key.count == byteCount else {
            throw KeychainError.decode("""
                \(sealed) unseals to \(key.count) bytes, not \(byteCount): it is not a Keygate host key; run `sudo keygate \
                setup-host --tpm --rotate` to make a new one (this-device-only items sealed for the old one stay unreadable)
                """)
        }
        return key
    }

    static func sealToTPM(at path: String, tcti requested: String?, rotate: Bool,
                          environment: KeygateEnvironment) throws -> TPMSetupOutcome {
        try requireRoot(path)
        try prepareFolder(of: path)
        let sealed = sealedPath(for: path)
        let plainExists = try existingEntry(at: path)
        let existing = try existingEntry(at: sealed) ? try readSealedFile(at: sealed) : nil

        if let existing, !rotate {
            return try keepSealed(existing, at: path, requested: requested, plainExists: plainExists, environment: environment)
        }
        let tcti = try requested.map { try TPMTCTI($0) }
            ?? existing.map { try TPMTCTI.forUnsealing(recorded: $0.tcti, environment: environment) }
            ?? TPMTCTI.forSealing(requested: nil, environment: environment)
        let connection = try TPMConnection(tcti)
        // Migrating keeps the existing key (a rotation, or no file, makes a fresh one).
        let migrating = !rotate && plainExists
        let key: SecureBytes
        if migrating, let plain = try readPlain(at: path) {
            key = plain
        } else {
            key = try SecureBytes.random(count: byteCount)
        }
        try writeSealed(key, through: connection, to: sealed, replace: existing != nil || rotate)
        if plainExists { try removePlain(at: path) }
        return rotate ? .rotated : (migrating ? .migrated : .created)
    }

    // MARK: - Implementation

    /// An existing sealed key, kept: it must open (through the requested TCTI, which is then recorded);
    /// a plain file left by an interrupted migration is removed once it is known to hold the same key.
    private static func keepSealed(_ file: SealedHostKeyFile, at path: String, requested: String?, plainExists: Bool,
                                   environment: KeygateEnvironment) throws -> TPMSetupOutcome {
        let sealed = sealedPath(for: path)
        let tcti = try requested.map { try TPMTCTI($0) } ?? TPMTCTI.forUnsealing(recorded: file.tcti, environment: environment)
        let key = try TPMSealing.unseal(file.object, on: TPMConnection(tcti), what: sealed)
        var outcome = TPMSetupOutcome.alreadySealed
        if let requested, requested != file.tcti {
            var updated = file
            updated.tcti = tcti.configuration
            try AtomicFile.write(updated.encoded(), to: sealed, mode: 0o400)
            outcome = .retargeted
        }
        if plainExists {
            guard let plain = try readPlain(at: path), plain.constantTimeEquals(key) else {
                throw KeychainError.duplicateItem("""
                    \(path) and \(sealed) both exist but hold different host keys: keep the one your this-device-only items were sealed \
                    for and remove the other (`sudo rm \(path)` keeps the TPM-sealed one), then run `sudo keygate setup-host --tpm` \
                    again
                    """)
            }
            try removePlain(at: path)
            outcome = .migrated
        }
        return outcome
    }

    /// Seals `key`, checks that the TPM gives the same bytes back, writes the file (0400, atomically)
    /// and reads it back. Nothing is written unless the TPM round trip worked.
    private static func writeSealed(_ key: SecureBytes, through connection: TPMConnection, to sealed: String, replace: Bool) throws {
        let object = try TPMSealing.seal(key, on: connection)
        let check = try TPMSealing.unseal(object, on: connection, what: "the newly sealed host key")
        guard check.constantTimeEquals(key) else {
            throw KeychainError.notAvailable("""
                the TPM at \(connection.tcti.configuration) gave back different bytes from the ones it sealed: nothing was changed; \
                check the TPM (`tpm2_selftest --fulltest`) before trusting it with the host key
                """)
        }
        let file = SealedHostKeyFile(tcti: connection.tcti.configuration, template: TPMSealing.eccP256StorageRootTemplate,
                                     object: object)
        let bytes = file.encoded()
        if replace {
            try AtomicFile.write(bytes, to: sealed, mode: 0o400)
        } else {
            try AtomicFile.create(bytes, at: sealed, mode: 0o400)
        }
        guard let written = try readSealedFile(at: sealed), written == file else {
            throw KeychainError.notAvailable("\(sealed) did not read back as written: check the disk; the plain host key (if any) was kept")
        }
    }

    /// Overwrites the plain key file with zeros (best effort) and removes it.
    private static func removePlain(at path: String) throws {
        let old = openOldKeyForScrubbing(path)
        try AtomicFile.remove(path)
        if let old { scrubAndClose(old) }
    }

    /// The parsed sealed file, or nil when absent. It must be a regular root-owned file, mode 0400 or 0600.
    private static func readSealedFile(at sealed: String) throws -> SealedHostKeyFile? {
        guard try existingEntry(at: sealed) else { return nil }
        let info: FileStatus
        switch FileStatus.of(sealed, links: .refuse) {
        case .success(let status): info = status
        case .failure(let e): throw failure(e.code, sealed, "inspect")
        }
        let mode = info.mode
        guard mode == 0o400 || mode == 0o600 else {
            throw KeychainError.notAvailable("""
                \(sealed) has mode \(octal(mode)); the sealed host key must be readable by root only: run `sudo chmod 0400 \
                \(sealed)`
                """)
        }
        guard let bytes = try AtomicFile.read(sealed, maxBytes: SealedHostKeyFile.maxBytes) else { return nil }
        return try SealedHostKeyFile.decode(bytes, path: sealed)
    }
}

// MARK: - Health (for keygate doctor)

extension HostKey {
    /// How a sealed host key stands, without reading it: the TPM must answer and load the sealed object.
    package enum SealedKeyHealth {
        /// The TPM at this TCTI loads it.
        case opens(tcti: String)
        /// The sealed file cannot be read or parsed.
        case unusable(KeychainError)
        /// No TPM answers at the recorded TCTI.
        case unreachable(tcti: String, KeychainError)
        /// The TPM answers but will not load it: its state was reset, or the file is foreign.
        case refused(tcti: String, KeychainError)
    }

    /// Loads (never unseals) the sealed object at `path`'s sealed file. Root only.
    package static func sealedHealth(at path: String, environment: KeygateEnvironment) -> SealedKeyHealth {
        let sealed = sealedPath(for: path)
        let file: SealedHostKeyFile
        let tcti: TPMTCTI
        do {
            try requireRoot(path)
            guard let found = try readSealedFile(at: sealed) else {
                return .unusable(.notAvailable("\(sealed) is absent: run `sudo keygate setup-host --tpm`"))
            }
            file = found
            tcti = try TPMTCTI.forUnsealing(recorded: found.tcti, environment: environment)
        } catch let error as KeychainError {
            return .unusable(error)
        } catch {
            return .unusable(.notAvailable("\(sealed): \(error)"))
        }
        let connection: TPMConnection
        do {
            connection = try TPMConnection(tcti)
            try connection.ping()
        } catch let error as KeychainError {
            return .unreachable(tcti: tcti.configuration, error)
        } catch {
            return .unreachable(tcti: tcti.configuration, .notAvailable("\(error)"))
        }
        do {
            try TPMSealing.verifyLoads(file.object, on: connection, what: sealed)
            return .opens(tcti: tcti.configuration)
        } catch let error as KeychainError {
            return .refused(tcti: tcti.configuration, error)
        } catch {
            return .refused(tcti: tcti.configuration, .notAvailable("\(error)"))
        }
    }

    /// Whether a TPM answers at the TCTI a new seal would use: nil when it does, else why not. Where that
    /// is a device node that does not exist, tpm2-tss is not even loaded.
    package static func tpmAbsenceReason(environment: KeygateEnvironment) -> (tcti: String, reason: String?) {
        do {
            let tcti = try TPMTCTI.forSealing(requested: nil, environment: environment)
            do {
                try TPMConnection(tcti).ping()
                return (tcti.configuration, nil)
            } catch let error as KeychainError {
                return (tcti.configuration, error.message)
            } catch {
                return (tcti.configuration, "\(error)")
            }
        } catch {
            return (TPMTCTI.defaultConfiguration, "\(error)")
        }
    }
}
