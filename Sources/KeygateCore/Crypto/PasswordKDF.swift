// Argon2id password hashing (libsodium's `crypto_pwhash`): turns a login password
// into the key that wraps the master key. The cost is calibrated once on the machine
// and recorded in the protector, so unlocking later uses exactly the same cost.
internal import CSodium

/// Argon2id cost, recorded with each password protector.
package struct KDFParameters: Codable, Sendable, Equatable {
    static let argon2id13 = "argon2id13"
    static let saltBytes = 16
    static let keyBytes = 32

    /// The floor for a protector that people rely on: libsodium's INTERACTIVE cost.
    package static let minimumOps: UInt64 = 2
    package static let minimumMemory: UInt64 = 64 * 1024 * 1024
    /// The ceiling calibration picks, and a bound on what a protector file may ask for
    /// (a tampered file must not make an unlock take minutes or exhaust memory).
    static let calibrationMaximumMemory: UInt64 = 256 * 1024 * 1024
    static let maximumOps: UInt64 = 64
    static let maximumMemory: UInt64 = 1024 * 1024 * 1024

    package var algorithm: String
    package var opsLimit: UInt64
    package var memLimitBytes: UInt64
    /// What calibration measured at this cost, for the record.
    package var calibratedMilliseconds: UInt64?

    package init(algorithm: String = KDFParameters.argon2id13, opsLimit: UInt64, memLimitBytes: UInt64, calibratedMilliseconds: UInt64? = nil) {
        self.algorithm = algorithm
        self.opsLimit = opsLimit
        self.memLimitBytes = memLimitBytes
        self.calibratedMilliseconds = calibratedMilliseconds
    }

    /// As a protector file records it (Protector.encoded).
    var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["algorithm": .string(algorithm), "opsLimit": .unsigned(opsLimit),
                                            "memLimitBytes": .unsigned(memLimitBytes)]
        if let calibratedMilliseconds { members["calibratedMilliseconds"] = .unsigned(calibratedMilliseconds) }
        return .object(members)
    }

    /// A deliberately cheap cost (ops 1, 8 MiB) for test suites. Only test-hook builds
    /// (debug builds: TestHooks.compiledIn) accept it for a new protector; see
    /// `validateForNewProtector()`.
    package static var testing: KDFParameters {
        KDFParameters(opsLimit: 1, memLimitBytes: 8 * 1024 * 1024)
    }

    /// Measures `crypto_pwhash` at libsodium's INTERACTIVE cost (ops 2, 64 MiB), scales
    /// memory first (up to 256 MiB) and then passes to reach about `targetSeconds`, and
    /// times the chosen cost once more to record what it really takes here.
    package static func calibrate(targetSeconds: Double = 0.5) throws -> KDFParameters {
        let probe = KDFParameters(opsLimit: minimumOps, memLimitBytes: minimumMemory)
        let probeSeconds = try probe.timeOneDerivation()
        let mib: UInt64 = 1024 * 1024
        // Argon2id's time grows about linearly with passes x memory.
        let budget = Double(minimumOps * (minimumMemory / mib)) * max(targetSeconds, 0) / max(probeSeconds, 0.000_001)
        var memoryMiB = UInt64(max(Double(minimumMemory / mib), min(Double(calibrationMaximumMemory / mib), budget / Double(minimumOps))))
        memoryMiB -= memoryMiB % 16  // a round number, never below 64
        let ops = UInt64(max(Double(minimumOps), min(Double(maximumOps), (budget / Double(memoryMiB)).rounded(.down))))
        var chosen = KDFParameters(opsLimit: ops, memLimitBytes: memoryMiB * mib)
        chosen.calibratedMilliseconds = UInt64((try chosen.timeOneDerivation() * 1000).rounded())
        return chosen
    }

    /// Derives the 32-byte wrapping key into locked memory. The C function is `crypto_pwhash(3)`.
    func deriveKey(password: SecureBytes, salt: [UInt8]) throws -> SecureBytes {
        try validate()
        guard salt.count == Self.saltBytes else {
            throw KeychainError.decode("""
                a password protector's salt must be \(Self.saltBytes) bytes, not \(salt.count): the protector file is corrupt; \
                unlock with the recovery key (`keygate unlock --recovery`) and run `keygate passwd`
                """)
        }
        let key = try SecureBytes(count: Self.keyBytes)
        let rc = key.withUnsafeMutableBytes { out in out.withNonNullBytes { outp in
            password.withUnsafeBytes { pw in pw.withNonNullBytes { pwp in
                salt.withUnsafeBytes { s in s.withNonNullBytes { sp in
                    UnsafeRawPointer(pwp).withMemoryRebound(to: CChar.self, capacity: max(pw.count, 1)) { pwc in
                        crypto_pwhash(outp, UInt64(out.count), pwc, UInt64(pw.count), sp,
                                      opsLimit, Int(memLimitBytes), crypto_pwhash_alg_argon2id13())
                    }
                } }
            } }
        } }
        guard rc == 0 else {
            throw KeychainError.notAvailable("""
                Argon2id could not allocate \(memLimitBytes / (1024 * 1024)) MiB: free some memory or raise this process's memory \
                limit, then try again
                """)
        }
        return key
    }

    /// Checks that libsodium can run this cost and that it is within Keygate's bounds.
    func validate() throws {
        guard algorithm == Self.argon2id13 else {
            throw KeychainError.decode("""
                the password protector uses key derivation \"\(algorithm)\", which this Keygate does not know: upgrade keygate
                """)
        }
        let opsRange = UInt64(crypto_pwhash_opslimit_min())...min(UInt64(crypto_pwhash_opslimit_max()), Self.maximumOps)
        let memRange = UInt64(crypto_pwhash_memlimit_min())...min(UInt64(crypto_pwhash_memlimit_max()), Self.maximumMemory)
        guard opsRange.contains(opsLimit), memRange.contains(memLimitBytes) else {
            throw KeychainError.decode("""
                the recorded Argon2id cost (ops \(opsLimit), \(memLimitBytes) bytes) is out of bounds (ops \
                \(opsRange.lowerBound)...\(opsRange.upperBound), memory \(memRange.lowerBound)...\(memRange.upperBound)): the \
                protector is damaged; unlock with the recovery key (`keygate unlock --recovery`) and run `keygate passwd`
                """)
        }
    }

    /// Refuses a cost below libsodium's INTERACTIVE for a protector that is about to be
    /// written, except in test-hook builds (debug), where `testing` is allowed.
    package func validateForNewProtector() throws {
        try validate()
        guard TestHooks.compiledIn || (opsLimit >= Self.minimumOps && memLimitBytes >= Self.minimumMemory) else {
            throw KeychainError.param("""
                an Argon2id cost of ops \(opsLimit) and \(memLimitBytes / (1024 * 1024)) MiB is too weak for a login protector: use \
                at least ops \(Self.minimumOps) and \(Self.minimumMemory / (1024 * 1024)) MiB, or let keygate calibrate
                """)
        }
    }

    /// Seconds one derivation takes at this cost, on a throwaway password.
    private func timeOneDerivation() throws -> Double {
        let password = try SecureBytes.random(count: 16)
        let salt = Sodium.randomBytes(Self.saltBytes)
        let start = MonotonicClock.nanoseconds
        _ = try deriveKey(password: password, salt: salt)
        return Double(MonotonicClock.nanoseconds - start) / 1e9
    }
}
