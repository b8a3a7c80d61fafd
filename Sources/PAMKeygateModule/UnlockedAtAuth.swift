// What auth tells open_session in the same PAM transaction: the helper prints "unlocked UID"
// once it has cached the keys, and the module keeps that uid on the handle (auth_mark.h), so
// open_session need not fork a child to look in the user's keyring (the child, its fork and
// its wait were a tenth or more of what a login cost beyond the KDF). Where auth ran in
// another process (sshd) or did not unlock, there is no mark and open_session looks in the keyring.
internal import CPAMModule

enum UnlockedAtAuth {
    /// Keeps the uid of the helper's "unlocked UID" line, if it printed one.
    static func remember(_ answer: Bytes, _ pamh: OpaquePointer) {
        let bytes = answer.bytes
        let prefix = Array("unlocked ".utf8)
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != 0x0A { end += 1 }
            defer { start = end + 1 }
            guard end - start > prefix.count, Array(bytes[start..<(start + prefix.count)]) == prefix else { continue }
            var uid: UInt64 = 0
            var index = start + prefix.count
            while index < end, bytes[index] >= 0x30, bytes[index] <= 0x39, uid <= UInt64(UInt32.max) {
                uid = uid * 10 + UInt64(bytes[index] - 0x30)
                index += 1
            }
            guard index == end, uid <= UInt64(UInt32.max) else { continue }
            _ = keygate_set_auth_mark(pamh, UInt32(uid))
        }
    }

    /// Whether auth in this transaction unlocked `uid`'s keychain (the mark is used up).
    static func take(uid: UInt32, _ pamh: OpaquePointer) -> Bool {
        keygate_take_auth_mark(pamh, uid) != 0
    }
}
