// When an item's secret can be read, as Apple's kSecAttrAccessible classes.
// Each class seals with its own class key, derived from the master key.

public enum Accessibility: String, Sendable, Hashable, CaseIterable, Codable {
    /// Readable while the keychain is unlocked (the default).
    case whenUnlocked = "when-unlocked"
    /// Readable from the first unlock until the user's keys are dropped (reboot, `lock --all`).
    case afterFirstUnlock = "after-first-unlock"
    case whenPasscodeSetThisDeviceOnly = "when-passcode-set-this-device-only"
    case whenUnlockedThisDeviceOnly = "when-unlocked-this-device-only"
    case afterFirstUnlockThisDeviceOnly = "after-first-unlock-this-device-only"

    /// Whether an item of this class is bound to this host's device key.
    public var isThisDeviceOnly: Bool {
        switch self {
        case .whenUnlocked, .afterFirstUnlock: return false
        default: return true
        }
    }

    /// Whether the class key outlives `keygate lock` (it lasts until reboot or `lock --all`).
    public var survivesLock: Bool {
        self == .afterFirstUnlock || self == .afterFirstUnlockThisDeviceOnly
    }

    /// The CLI spellings, accepting Apple's constant names too.
    public init?(name: String) {
        if let direct = Accessibility(rawValue: name) { self = direct; return }
        let apple: [String: Accessibility] = [
            "ksecattraccessiblewhenunlocked": .whenUnlocked,
            "ksecattraccessibleafterfirstunlock": .afterFirstUnlock,
            "ksecattraccessiblewhenpasscodesetthisdeviceonly": .whenPasscodeSetThisDeviceOnly,
            "ksecattraccessiblewhenunlockedthisdeviceonly": .whenUnlockedThisDeviceOnly,
            "ksecattraccessibleafterfirstunlockthisdeviceonly": .afterFirstUnlockThisDeviceOnly,
        ]
        guard let found = apple[name.lowercased()] else { return nil }
        self = found
    }
}
