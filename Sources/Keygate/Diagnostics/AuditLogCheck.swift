// Doctor check: where Keygate's audit lines go (AuditLog: syslog, facility authpriv, as
// pam_keygate's lines do). syslog(3) drops a line without a word when nothing listens
// on /dev/log (containers, minimal hosts), so the doctor says whether something does,
// and whether it is the journal. The gatekeeper's own decisions are kept
// in root's record as well (GateAuditFile), whatever syslog does, and the doctor names it.
internal import KeygateGateWire

enum AuditLogCheck {
    static let name = "audit-log"
    static let socket = "/dev/log"
    static let journal = "/run/systemd/journal/socket"

    static func run(environment: KeygateEnvironment) -> DiagnosticResult {
        guard case .found(let info) = FileProbe.inspect(socket), info.kind == .socket || info.kind == .symlink else {
            return DiagnosticResult(name, .warn, """
                nothing listens on \(socket): the audit lines of keygate and pam_keygate are lost (the gatekeeper's decisions \
                are still kept in \(GatekeeperPaths.auditUserFolder(environment))/UID.log, root's)
                """, advice: "run a syslog daemon (apt-get install rsyslog) or systemd-journald; `keygate --verbose` also "
                              + "shows a command's audit lines on stderr")
        }
        let destination = FileProbe.exists(journal) ? "the systemd journal (journalctl -t keygate)" : "syslog, facility authpriv"
        return DiagnosticResult(name, .ok, """
            audit lines go to \(destination) through \(socket); the gatekeeper's decisions also to \(GatekeeperPaths.auditUserFolder(environment))/UID.log (root's)
            """)
    }
}
