// Root's keys for one user (docs/GATEKEEPER.md): a 32-byte gate secret per uid, made on
// first use (mode 0400, root), and the key pairs derived from it. Each gate key pair is
// an item's own: its seed binds the item's identity and access-control flags, so a box
// of one item opens nothing for another, and a client that lies about which item a box
// belongs to derives a key that does not match the box's key id.
//   presence:    BLAKE2b(secret; "keygate.gate.presence.v1" || generation || flags || identity)
//   current set: BLAKE2b(secret; "keygate.gate.current-set.v1" || the user's shadow hash || flags || identity)
//   enrolled set: BLAKE2b(secret; "keygate.gate.enrolled-set.v1" || the enrolled prints' digest (EnrolledPrints)
//                || flags || identity): biometryCurrentSet items, dead once a finger is enrolled or removed
//   device:      BLAKE2b(device key; "keygate.gate.device.v1" || flags || identity), the device key
//                being this host's (DeviceKey, from the root-only host key); it never leaves root.
// The generation counts password changes: whenever the user's entry in the shadow database
// changes (passwd, pam_keygate's chauthtok, chpasswd, a root reset) the next call moves to a
// new presence pair. Earlier generations stay derivable, so presence items sealed before
// the change keep opening (through the gatekeeper only); items sealed after it use keys
// nothing from before it ever saw.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

package struct GateSecrets {
    let uid: UInt32
    private let secret: SecureBytes
    /// The current presence generation (1 and up).
    let generation: UInt64
    /// The user's password hash field, or nil without a shadow entry (then the generation stands in).
    private let shadowHash: SecureBytes?

    static let secretBytes = 32
    /// The length of a seal on a class public key.
    static let sealBytes = PublicKeys.sealBytes
    /// How many earlier presence generations are tried when a box names an older key.
    static let maxGenerationsBack: UInt64 = 256

    /// Loads (or creates) the user's gate secret and brings the generation up to date with the
    /// shadow database. Root only in release builds.
    static func load(uid: UInt32, userName: String, environment: KeygateEnvironment) throws -> GateSecrets {
        let folder = GatekeeperPaths.stateDirectory(uid: uid, environment)
        try GatekeeperPaths.makeFolder(folder, mode: 0o700)
        let secretPath = folder + "/secret"
        var secret = try AtomicFile.read(secretPath, maxBytes: 64)
        if secret == nil {
            var fresh = try SecureBytes.random(count: secretBytes).unprotectedCopy()
            defer { Sodium.wipe(&fresh) }
            do { try AtomicFile.create(fresh, at: secretPath, mode: 0o400) } catch {
                // Another call made it first: use that one.
            }
            secret = try AtomicFile.read(secretPath, maxBytes: 64)
        }
        guard var bytes = secret, bytes.count == secretBytes else {
            throw KeychainError.decode("""
                the gatekeeper's secret for uid \(uid) (\(secretPath)) is damaged: gated items of this user cannot be opened; an \
                administrator can remove the file (those items are then lost) or restore it from a backup
                """)
        }
        let key = try SecureBytes(consuming: &bytes)
        let shadow = shadowEntry(userName)
        let generation = try currentGeneration(folder: folder, secret: key, shadow: shadow)
        return GateSecrets(uid: uid, secret: key, generation: generation, shadowHash: shadow)
    }

    // MARK: Key pairs

    func presencePair(generation: UInt64, flags: UInt32, identity: ItemIdentity) throws -> BoxKeyPair {
        let input = Self.u64(generation) + Self.u32(flags) + identity.canonicalBytes
        if let kept = derivedPairs?.presence[input] { return kept }
        let pair = try derive("keygate.gate.presence.v1", input)
        derivedPairs?.keep(pair, for: input)
        return pair
    }

    /// The share in an item's gate box, opened with `pair` (nil when it does not open). With
    /// kept pairs, a box opened once is not opened again: the share is a function of the pair
    /// and the box's bytes alone, and the daemon that keeps it holds the secret it comes from.
    func share(in box: [UInt8], openedWith pair: BoxKeyPair) -> [UInt8]? {
        let key = pair.publicKey + box
        if let kept = derivedPairs?.shares[key] { return kept }
        guard let share = SealedBox.openToArray(box[...], with: pair) else { return nil }
        derivedPairs?.keep(share: share, for: key)
        return share
    }

    /// What the daemon derives from these secrets, kept for the next request: the presence pairs
    /// (an X25519 base-point multiplication and three locked allocations each) and the shares
    /// they opened (an X25519 multiplication each). In memory the daemon locks whole
    /// (GateDaemon); GateDaemonCache drops it with these secrets when the secret, the
    /// generation or the shadow entry changes. The inputs (generation, flags, identity; a
    /// public key and a box) are not secret.
    final class DerivedPairs {
        fileprivate var presence: [[UInt8]: BoxKeyPair] = [:]
        fileprivate var shares: [[UInt8]: [UInt8]] = [:]
        /// At most this many pairs and as many shares are kept per user; beyond it each set starts again.
        static let capacity = 1024

        fileprivate func keep(_ pair: BoxKeyPair, for input: [UInt8]) {
            if presence.count >= Self.capacity { presence.removeAll() }
            presence[input] = pair
        }

        fileprivate func keep(share: [UInt8], for key: [UInt8]) {
            if shares.count >= Self.capacity {
                for index in shares.indices { Sodium.wipe(&shares.values[index]) }
                shares.removeAll()
            }
            shares[key] = share
        }

        deinit {
            for index in shares.indices { Sodium.wipe(&shares.values[index]) }
        }
    }

    private var derivedPairs: DerivedPairs?

    /// Keeps the presence pairs this value derives and the shares they open, for the next
    /// request (the daemon only).
    mutating func keepDerivedPairs() { derivedPairs = DerivedPairs() }

    func currentSetPair(flags: UInt32, identity: ItemIdentity) throws -> BoxKeyPair {
        var bound = shadowHash?.unprotectedCopy() ?? Array("generation".utf8) + Self.u64(generation)
        defer { Sodium.wipe(&bound) }
        return try derive("keygate.gate.current-set.v1", Self.u32(UInt32(bound.count)) + bound + Self.u32(flags) + identity.canonicalBytes)
    }

    /// The enrolled-set pair of `prints` (biometryCurrentSet); .notAvailable when no finger is enrolled.
    func enrolledSetPair(_ prints: EnrolledPrints, flags: UInt32, identity: ItemIdentity) throws -> BoxKeyPair {
        guard let digest = prints.digest else {
            throw KeychainError.notAvailable("""
                biometry-current-set items need an enrolled finger, and you have none: enroll one with `fprintd-enroll`, then add \
                the item again
                """)
        }
        return try derive("keygate.gate.enrolled-set.v1", digest + Self.u32(flags) + identity.canonicalBytes)
    }

    /// LAContext.evaluatedPolicyDomainState: BLAKE2b(secret; "keygate.gate.domain-state.v1" ||
    /// digest), 32 bytes; nil when no finger is enrolled. It changes exactly when the digest does,
    /// and without root's secret says nothing about the digest or the prints.
    func domainState(_ prints: EnrolledPrints) throws -> [UInt8]? {
        guard let digest = prints.digest else { return nil }
        var message = Array("keygate.gate.domain-state.v1".utf8) + digest
        return try GenericHash.hash(SecureBytes(consuming: &message), secretKey: secret, outputBytes: 32).unprotectedCopy()
    }

    /// The device pair; .notAvailable with the fix when this host has no host key.
    func devicePair(flags: UInt32, identity: ItemIdentity, environment: KeygateEnvironment) throws -> BoxKeyPair {
        guard let deviceKey = try DeviceKey.deriveFromHost(uid: uid, environment: environment) else {
            throw KeychainError.notAvailable("""
                this-device-only items need this host's key, and the host has none: an administrator runs `sudo keygate setup-host`
                """)
        }
        var message = Array("keygate.gate.device.v1".utf8) + Self.u32(flags) + identity.canonicalBytes
        let input = try SecureBytes(consuming: &message)
        return try BoxKeyPair.derive(seed: GenericHash.hash(input, secretKey: deviceKey, outputBytes: BoxKeyPair.seedBytes))
    }

    /// The presence pair of any generation up to the current one whose key id is `keyID`.
    func presencePair(keyID: [UInt8], flags: UInt32, identity: ItemIdentity) throws -> BoxKeyPair? {
        var generation = self.generation
        while generation >= 1, self.generation - generation <= Self.maxGenerationsBack {
            let pair = try presencePair(generation: generation, flags: flags, identity: identity)
            if pair.keyID == keyID { return pair }
            generation -= 1
        }
        return nil
    }

    static let accountTagBytes = 16

    /// Names this account's gate state without revealing the secret: BLAKE2b(secret;
    /// "keygate.gate.account.v1"). A new account given a forgotten uid gets a new secret, so a
    /// different tag; what root kept for the old account (a finger-unlock seed) is bound to the old one.
    func accountTag() throws -> [UInt8] {
        var message = Array("keygate.gate.account.v1".utf8)
        return try GenericHash.hash(SecureBytes(consuming: &message), secretKey: secret, outputBytes: Self.accountTagBytes)
            .unprotectedCopy()
    }

    /// The gatekeeper's seal on a class public key the user's keychain seals items to.
    func classSeal(accessibility: Accessibility, publicKey: [UInt8]) throws -> [UInt8] {
        var message = Array("keygate.gate.class-seal.v1".utf8) + Self.u32(uid) + [accessibility.blobCode] + publicKey
        let input = try SecureBytes(consuming: &message)
        return try GenericHash.hash(input, secretKey: secret, outputBytes: Self.sealBytes).unprotectedCopy()
    }

    /// Root's seals on the class public keys given (a login, which derived them once).
    package static func seals(publicKeys: [Accessibility: [UInt8]], uid: UInt32, userName: String,
                              environment: KeygateEnvironment) throws -> [Accessibility: [UInt8]] {
        let secrets = try load(uid: uid, userName: userName, environment: environment)
        var seals: [Accessibility: [UInt8]] = [:]
        for (accessibility, publicKey) in publicKeys {
            seals[accessibility] = try secrets.classSeal(accessibility: accessibility, publicKey: publicKey)
        }
        return seals
    }

    /// Root's seals on every class public key of `masterKey` (HostProtectorAdmin, which runs as root).
    package static func seals(masterKey: SecureBytes, uid: UInt32, userName: String,
                              environment: KeygateEnvironment) throws -> [Accessibility: [UInt8]] {
        let secrets = try load(uid: uid, userName: userName, environment: environment)
        var seals: [Accessibility: [UInt8]] = [:]
        for accessibility in Accessibility.allCases {
            seals[accessibility] = try secrets.classSeal(accessibility: accessibility,
                                                         publicKey: ClassKeys.keyPair(masterKey: masterKey, for: accessibility).publicKey)
        }
        return seals
    }

    // MARK: Implementation

    private init(uid: UInt32, secret: SecureBytes, generation: UInt64, shadowHash: SecureBytes?) {
        self.uid = uid
        self.secret = secret
        self.generation = generation
        self.shadowHash = shadowHash
    }

    private func derive(_ label: String, _ rest: [UInt8]) throws -> BoxKeyPair {
        var message = Array(label.utf8) + rest
        let input = try SecureBytes(consuming: &message)
        return try BoxKeyPair.derive(seed: GenericHash.hash(input, secretKey: secret, outputBytes: BoxKeyPair.seedBytes))
    }

    /// generation file: 8 bytes of generation, then 32 bytes of a keyed hash of the shadow entry
    /// it was last seen with. A changed entry starts the next generation.
    private static func currentGeneration(folder: String, secret: SecureBytes, shadow: SecureBytes?) throws -> UInt64 {
        let path = folder + "/generation"
        var message = Array("keygate.gate.shadow-seen.v1".utf8) + (shadow?.unprotectedCopy() ?? [])
        let seen = try GenericHash.hash(SecureBytes(consuming: &message), secretKey: secret, outputBytes: 32).unprotectedCopy()
        // The first generation comes from the secret, not 1: a new account given a forgotten uid starts
        // at a generation no box or seed of the old account names (GateSecrets' secret is new too).
        var generation = try firstGeneration(secret)
        // Absent or damaged (not 40 bytes): the first generation. A file that cannot be read at all is an error:
        // starting again there would move the generation under the user's items.
        if let stored = try AtomicFile.read(path, maxBytes: 64), stored.count == 40 {
            generation = stored[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if Array(stored[8..<40]) == seen { return max(generation, 1) }
            generation += 1
        }
        try AtomicFile.write(u64(generation) + seen, to: path, mode: 0o600)
        return generation
    }

    /// The generation a secret starts at: 62 bits of BLAKE2b(secret; "keygate.gate.first-generation.v1"),
    /// at least 1 (a pure function of the secret, so two first calls racing agree on it).
    private static func firstGeneration(_ secret: SecureBytes) throws -> UInt64 {
        var message = Array("keygate.gate.first-generation.v1".utf8)
        let bytes = try GenericHash.hash(SecureBytes(consuming: &message), secretKey: secret, outputBytes: 16).unprotectedCopy()
        return max(bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } >> 2, 1)
    }

    /// The hash field of the user's shadow entry (root can read it), or nil.
    private static func shadowEntry(_ name: String) -> SecureBytes? {
        ShadowEntry.passwordHash(of: name)
    }

    static func u32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)] }
    static func u64(_ v: UInt64) -> [UInt8] { u32(UInt32(v >> 32)) + u32(UInt32(v & 0xffff_ffff)) }
}
