// A user's password hash field from the shadow database (getspnam(3); root can read it), into
// locked memory. The gatekeeper binds current-set gate keys to it, so a password change
// invalidates them (GateSecrets).
internal import CSystem
internal import Glibc

package enum ShadowEntry {
    /// The hash field of `name`'s shadow entry, or nil without one (or with an empty field).
    package static func passwordHash(of name: String) -> SecureBytes? {
        guard let entry = getspnam(name), let field = entry.pointee.sp_pwdp else { return nil }
        let length = strlen(field)
        guard length > 0 else { return nil }
        return try? SecureBytes(copying: UnsafeRawBufferPointer(start: field, count: length))
    }
}
