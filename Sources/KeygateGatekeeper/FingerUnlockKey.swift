// What lets a finger reopen a locked keychain (docs/GATEKEEPER.md, "A finger reopens the
// keychain"), as Touch ID unlocks an iPhone within 48 hours of the passcode: at each password
// unlock the gatekeeper makes a fresh X25519 pair for the user and keeps its seed in root's
// file under /run (tmpfs: gone at reboot), with the boot, the time of that password and the
// password generation it was made under (GateSecrets). The client seals the master key to the
// public half and keeps that sealed box in its data folder: useless without root's seed. After
// a matching finger, within the policy's window (`finger-unlock`, default 48 h since that
// password), under the same boot and password generation, and while biometry is not locked
// out, the gatekeeper opens the box and returns the master key. `keygate lock --all`, the
// biometric lockout, a password change (the generation moves) and the window's end drop it.
// The file also names the account it was armed for (GateSecrets.accountTag, a keyed hash of
// the uid's gate secret): a new account given a forgotten uid has a new secret, so no seed
// of the old account opens anything for it, even one left behind.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

struct FingerUnlockKey {
    /// CLOCK_BOOTTIME seconds of the password unlock that made it.
    let madeAt: UInt64
    /// GateSecrets.generation then: a password change since voids it.
    let generation: UInt64
    /// GateSecrets.accountTag when it was made: another account's (a reused uid) never matches.
    let account: [UInt8]
    let pair: BoxKeyPair

    /// A seed file of the form before the account tag ("keygate-finger-unlock 1") is dropped at load:
    /// the next password arms the finger again.
    static let magic = Array("keygate-finger-unlock 2\n".utf8)

    /// Root's folder for these files: /run/keygate/finger (test-hook builds: below KEYGATE_TEST_GATE_DIR).
    static func root(_ environment: KeygateEnvironment) -> String { GatekeeperPaths.fingerUnlockRoot(environment) }

    static func path(uid: UInt32, _ environment: KeygateEnvironment) -> String { GatekeeperPaths.fingerUnlockPath(uid: uid, environment) }

    /// Makes a new pair for `uid` (replacing any), recorded as made now under `generation`.
    static func make(uid: UInt32, generation: UInt64, account: [UInt8], environment: KeygateEnvironment) throws -> FingerUnlockKey {
        guard account.count == GateSecrets.accountTagBytes else { throw KeychainError.param("the gatekeeper's account tag is damaged") }
        try GatekeeperPaths.makeFolder(root(environment), mode: 0o700)
        var seed = try SecureBytes.random(count: BoxKeyPair.seedBytes).unprotectedCopy()
        defer { Sodium.wipe(&seed) }
        let boot = Array(GateRecords.currentBootID.utf8)
        let now = GateRecords.now
        var file = magic + GateSecrets.u32(UInt32(boot.count)) + boot + GateSecrets.u64(now) + GateSecrets.u64(generation) + account
            + seed
        defer { Sodium.wipe(&file) }
        try AtomicFile.write(file, to: path(uid: uid, environment), mode: 0o600)
        return FingerUnlockKey(madeAt: now, generation: generation, account: account,
                               pair: try BoxKeyPair.derive(seed: SecureBytes(consuming: &seed)))
    }

    /// The user's kept pair, or nil when there is none or it is of another boot (then it is removed).
    static func load(uid: UInt32, environment: KeygateEnvironment) throws -> FingerUnlockKey? {
        guard var file = try AtomicFile.read(path(uid: uid, environment), maxBytes: 512) else { return nil }
        defer { Sodium.wipe(&file) }
        var r = ByteReader(file)
        var seed: [UInt8] = []
        defer { Sodium.wipe(&seed) }
        let madeAt: UInt64, generation: UInt64, account: [UInt8]
        do {
            guard try r.raw(magic.count) == magic else { throw GateWireError.malformed("another form") }
            let bootLength = try r.u32()
            guard bootLength <= 64, String(decoding: try r.raw(Int(bootLength)), as: UTF8.self) == GateRecords.currentBootID else {
                throw GateWireError.malformed("another boot")
            }
            (madeAt, generation, account) = (try r.u64(), try r.u64(), try r.raw(GateSecrets.accountTagBytes))
            seed = try r.raw(BoxKeyPair.seedBytes)
            guard r.isAtEnd else { throw GateWireError.malformed("trailing bytes") }
        } catch {
            // Another boot's, an older form's, or damaged: nothing a finger may open; the next password arms again.
            drop(uid: uid, environment: environment)
            return nil
        }
        return FingerUnlockKey(madeAt: madeAt, generation: generation, account: account,
                               pair: try BoxKeyPair.derive(seed: SecureBytes(consuming: &seed)))
    }

    /// Removes the user's pair: the finger no longer reopens the keychain until the next password unlock.
    static func drop(uid: UInt32, environment: KeygateEnvironment) {
        FileSystem.remove(path(uid: uid, environment))
    }
}
