// The host protector's key for one user on this host: keyed BLAKE2b of the uid and
// the machine-id under the root-only host key (HostKey), with its own domain label,
// so it is independent of the user's device key (DeviceKey) although both come from
// the same host key. Only root can derive it. The master key wrapped under it is the
// "host" protector (protectors/host.json, KeyStore+HostProtector.swift): what lets a
// service account with no password open its after-first-unlock items after a reboot.
// Whether a user may have one is the policy's `host-protector` setting, checked by
// the callers (HostProtectorUnlock, pam_keygate). Hashing is delegated to DeviceKey's
// derivation (GenericHash).

package enum HostProtector {
    /// Domain separation from the device key ("keygate-device-v1").
    static let label = Array("keygate-host-protector-v1".utf8)

    /// BLAKE2b-256(key: host key, message: "keygate-host-protector-v1" || uid (4 bytes,
    /// big-endian) || machine-id).
    static func deriveKey(hostKey: SecureBytes, uid: UInt32, machineID: String) throws -> SecureBytes {
        try DeviceKey.derive(label: label, hostKey: hostKey, uid: uid, machineID: machineID)
    }

    /// The key for `uid` from this host's key and machine-id (root only), or nil when the
    /// host has no host key.
    package static func deriveFromHost(uid: UInt32, environment: KeygateEnvironment) throws -> SecureBytes? {
        guard let hostKey = try HostKey.read(environment: environment) else { return nil }
        return try deriveKey(hostKey: hostKey, uid: uid, machineID: DeviceKey.machineID())
    }

    /// What to say when the host has no host key.
    package static let noHostKeyAdvice = """
        this host has no host key, so no host protector can be made or opened: run `sudo keygate setup-host` (a restored or \
        re-imaged host needs the recovery key instead)
        """
}
