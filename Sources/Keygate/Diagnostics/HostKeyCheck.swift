// Doctor check: the host key behind this-device-only items (HostKey.path): present,
// a regular file owned by root, mode 0400 (0600 tolerated). Looks with lstat only;
// a non-root user cannot see into /var/lib/keygate and is told to ask root.

enum HostKeyCheck {
    static let name = "host-key"

    static func run(path: String = HostKey.path) -> DiagnosticResult {
        switch FileProbe.inspect(path) {
        case .absent:
            return DiagnosticResult(name, .warn, "\(path) is absent: this-device-only items cannot be added or read",
                                    advice: "sudo keygate setup-host")
        case .denied:
            return DiagnosticResult(name, .ok, "\(path) is root's (not visible to uid \(FileProbe.uid)); run `sudo keygate doctor` to check its mode")
        case .error(let why):
            return DiagnosticResult(name, .warn, "cannot inspect \(path): \(why)", advice: "check /var/lib/keygate as root")
        case .found(let info):
            if info.kind != .regular {
                return DiagnosticResult(name, .fail, "\(path) is not a regular file (a link or special file is refused)",
                                        advice: "remove it, then run sudo keygate setup-host (this-device-only items sealed for it are lost)")
            }
            if info.uid != 0 || (info.mode != 0o400 && info.mode != 0o600) {
                return DiagnosticResult(name, .fail, "\(path) has owner uid \(info.uid) and mode 0\(String(info.mode, radix: 8)); it must be root's, mode 0400",
                                        advice: "sudo chown root:root \(path) && sudo chmod 0400 \(path)")
            }
            return DiagnosticResult(name, .ok, "\(path) present, root, mode 0\(String(info.mode, radix: 8))")
        }
    }
}
