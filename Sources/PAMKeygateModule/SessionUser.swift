// What a session's open and close need to know in the module itself, without the helper:
// the options that matter there (debug, unlock_only, min_uid=; the helper parses and reports
// all of them when it runs), the user by name from the password database (its uid for the
// count and the cached keys' names, its gid for the child that looks as it), whether the
// user's keychain is unlocked and the lock at the last close (both user_keys.h), and the
// module's own log lines (the lock's also in root's audit record, ModuleRecord).
internal import CPAMModule

struct SessionOptions {
    var debug = false
    var unlockOnly = false
    /// As the helper's ModuleOptions: users below this uid (system accounts) are left alone;
    /// a value that is not a uid leaves the default.
    var minUID: UInt32 = 1000

    init(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) {
        guard let argv, argc > 0 else { return }
        for index in 0..<Int(argc) {
            guard let argument = argv[index] else { continue }
            if strcmp(argument, "debug") == 0 { debug = true }
            if strcmp(argument, "unlock_only") == 0 { unlockOnly = true }
            if strncmp(argument, "min_uid=", 8) == 0, let uid = Self.uid(argument + 8) { minUID = uid }
        }
    }

    /// Decimal digits that fit a uid (as UInt32("...") reads them), or nil.
    static func uid(_ text: UnsafePointer<CChar>) -> UInt32? {
        var value: UInt64 = 0
        var index = 0
        if text[0] == 0x2B { index = 1 }   // UInt32("+5") is 5 to the helper too
        let first = index
        while text[index] != 0 {
            let digit = UInt8(bitPattern: text[index])
            guard digit >= 0x30, digit <= 0x39, index - first < 10 else { return nil }
            value = value * 10 + UInt64(digit - 0x30)
            index += 1
        }
        guard index > first, value <= UInt64(UInt32.max) else { return nil }
        return UInt32(truncatingIfNeeded: value)
    }
}

struct SessionUser {
    enum Lookup {
        /// No user, or one below min_uid: nothing to do, as the helper would decide.
        case ignored
        /// Not in the password database (or a name the module will not pass on): the helper
        /// looks again and logs why.
        case unknown
        case found(SessionUser)
    }

    let name: UnsafePointer<CChar>
    let nameLength: Int
    let uid: UInt32
    let gid: UInt32

    static func find(_ pamh: OpaquePointer, _ options: SessionOptions) -> Lookup {
        guard let name = item(pamh, PAM_USER), let length = fieldLength(name), length > 0 else { return .ignored }
        var uid: uid_t = 0
        var gid: gid_t = 0
        guard keygate_lookup_user(name, &uid, &gid) == 0 else { return .unknown }
        guard uid >= options.minUID else {
            if options.debug {
                var line = Bytes()
                line.append(name, length)
                line.append(" has a uid below min_uid: left alone")
                log(pamh, LOG_DEBUG, line)
            }
            return .ignored
        }
        return .found(SessionUser(name: name, nameLength: length, uid: uid, gid: gid))
    }

    /// Whether the keychain is unlocked (user_keys.h): KEYGATE_USER_KEYS_FOUND when its
    /// master key is in the user's keyring, 0 when it is not, KEYGATE_USER_KEYS_FAILED when
    /// the child could not look as the user.
    func isUnlocked() -> Int32 {
        description("master").withUnsafeBufferPointer { keygate_user_key_present(uid, gid, $0.baseAddress) }
    }

    /// The lock at the user's last close, done here (user_keys.h: a child as the user drops the
    /// master key and Keygate 1.x's device key, as LoginKeys.lock does) and said as the
    /// helper says it: the notice to syslog and to root's audit record. The record is opened
    /// first, so a lock done here always has its line. False when the module cannot do it
    /// (not root, a record that is not root's alone or is due for rotation, a name the record
    /// would not keep whole in ASCII, a child that could not become the user): nothing was
    /// written, and the helper's "lock" phase does all of it.
    func lockWithoutTheHelper(_ pamh: OpaquePointer, _ options: SessionOptions) -> Bool {
        var message = Bytes()
        message.append("locked the keychain of ")
        message.append(name, nameLength)
        message.append(": last session closed")
        guard let record = ModuleRecord(priority: "notice", message: message) else { return false }
        let answer = description("master").withUnsafeBufferPointer { master in
            description("device").withUnsafeBufferPointer { device in
                keygate_user_keys_lock(uid, gid, master.baseAddress, device.baseAddress)
            }
        }
        switch answer {
        case KEYGATE_USER_KEYS_FOUND:
            record.write()
            Self.log(pamh, LOG_NOTICE, message)
            return true
        case 0:
            record.discard()
            if options.debug { log(pamh, "last session of ", " closed; the keychain was already locked") }
            return true
        default:
            record.discard()
            return false
        }
    }

    /// "keygate:<uid>:<name>", KeyCache's name of a cached key, as a C string.
    private func description(_ name: StaticString) -> [CChar] {
        var text = Bytes()
        text.append("keygate:")
        text.append(unsigned: UInt64(uid))
        text.append(":")
        text.append(name)
        text.bytes.append(0)
        return text.bytes.map { CChar(bitPattern: $0) }
    }

    /// One LOG_DEBUG line: before, the user's name, after.
    func log(_ pamh: OpaquePointer, _ before: StaticString, _ after: StaticString) {
        log(pamh, LOG_DEBUG, before, after)
    }

    private func log(_ pamh: OpaquePointer, _ priority: Int32, _ before: StaticString, _ after: StaticString) {
        var line = Bytes()
        line.append(before)
        line.append(name, nameLength)
        line.append(after)
        Self.log(pamh, priority, line)
    }

    /// One LOG_DEBUG line: before, the name, middle, a number, after.
    func log(_ pamh: OpaquePointer, _ before: StaticString, _ middle: StaticString, _ number: Int64, _ after: StaticString) {
        var line = Bytes()
        line.append(before)
        line.append(name, nameLength)
        line.append(middle)
        line.append(number: number)
        line.append(after)
        Self.log(pamh, LOG_DEBUG, line)
    }

    static func log(_ pamh: OpaquePointer, _ priority: Int32, _ line: Bytes) {
        var text = line.bytes
        text.append(0)
        text.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { keygate_pam_syslog(pamh, priority, $0.baseAddress) }
        }
    }
}
