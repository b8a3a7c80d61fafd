// Doctor check: this uid's kernel keyring quota, from /proc/key-users
// ("uid: usage nkeys/nikeys qnkeys/maxkeys qnbytes/maxbytes"). Keygate caches keys
// in the user keyring; a full quota makes unlock fail with EDQUOT. Limits are the
// sysctls kernel.keys.maxkeys/maxbytes (root_maxkeys/root_maxbytes for root).

enum KeyringQuotaCheck {
    static let name = "keyring-quota"

    struct Usage: Equatable {
        var keys: Int, maxKeys: Int, bytes: Int, maxBytes: Int
    }

    /// The line for `uid` in /proc/key-users text; nil when the uid has no keys yet or the line is malformed.
    static func parse(_ text: String, uid: UInt32) -> Usage? {
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == ":" })
            guard fields.count >= 5, UInt32(fields[0]) == uid else { continue }
            let keys = fields[3].split(separator: "/"), bytes = fields[4].split(separator: "/")
            guard keys.count == 2, bytes.count == 2, let k = Int(keys[0]), let mk = Int(keys[1]),
                  let b = Int(bytes[0]), let mb = Int(bytes[1]) else { return nil }
            return Usage(keys: k, maxKeys: mk, bytes: b, maxBytes: mb)
        }
        return nil
    }

    static func run(uid: UInt32 = FileProbe.uid) -> DiagnosticResult {
        guard let text = FileProbe.readText("/proc/key-users") else {
            return DiagnosticResult(name, .warn, "cannot read /proc/key-users (no kernel keyring support?)",
                                    advice: "Keygate needs a kernel with CONFIG_KEYS; check `keyctl show @u`")
        }
        guard let u = parse(text, uid: uid) else {
            return DiagnosticResult(name, .ok, "uid \(uid) holds no keys yet")
        }
        let sysctl = uid == 0 ? "kernel.keys.root_maxkeys / root_maxbytes" : "kernel.keys.maxkeys / maxbytes"
        let detail = "\(u.keys)/\(u.maxKeys) keys, \(u.bytes)/\(u.maxBytes) bytes"
        if u.keys >= u.maxKeys || u.bytes >= u.maxBytes {
            return DiagnosticResult(name, .fail, detail + ": the quota is full, so unlock cannot cache keys",
                                    advice: "free keys (keygate lock --all; keyctl clear @u) or raise \(sysctl)")
        }
        if u.keys * 10 >= u.maxKeys * 8 || u.bytes * 10 >= u.maxBytes * 8 {
            return DiagnosticResult(name, .warn, detail + ": over 80% used", advice: "raise \(sysctl), or drop unused keys")
        }
        return DiagnosticResult(name, .ok, detail)
    }
}
