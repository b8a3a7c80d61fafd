// What an unlocking step returns, as a value: the keys it found, and the follow-ups an unlock
// still owes. An authentication that opened the keychain normally settles them in its own run
// of the gatekeeper (the `unlocking` flag: the class keys sealed, the finger unlock armed); what
// it could not settle is named here, and the operation runs it as an explicit step after the
// read (KeychainOperations.settle), where every call to the gatekeeper is in sight.

/// Keys found by an unlocking step, with the follow-ups still owed.
struct Unlocked<Value> {
    /// The keys found (or what was made with them: a sealed blob, a satisfied read).
    var value: Value
    var owed: [FollowUp] = []

    init(_ value: Value, owed: [FollowUp] = []) {
        self.value = value
        self.owed = owed
    }

    /// The same follow-ups, for what `transform` makes of the value.
    func map<Other>(_ transform: (Value) throws -> Other) rethrows -> Unlocked<Other> {
        Unlocked<Other>(try transform(value), owed: owed)
    }

    /// This value, owing `earlier` first, then its own.
    func owing(_ earlier: [FollowUp]) -> Unlocked<Value> {
        Unlocked(value, owed: earlier + owed)
    }
}

/// What an unlock leaves to do.
enum FollowUp {
    /// The gatekeeper's seals on the class public keys were not given with the authentication
    /// (keys.json recorded none, or keys this master key does not derive): `certify`, which
    /// accepts the password just typed (within the last minute, in this scope).
    case certify(SecureBytes)
    /// The finger unlock was not armed with the authentication: `fingerUnlockArm`.
    case armFingerUnlock(SecureBytes)
    /// The keychain still has Keygate 1.x's gate keys: the items sealed to them move to the
    /// gatekeeper's (LegacyGateMigration, which needs the store: the operation's).
    case moveLegacyItems(PasswordUnlock)
}
