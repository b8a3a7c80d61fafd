// Doctor check: is there a D-Bus session bus to reach the Secret Service on? Reads
// DBUS_SESSION_BUS_ADDRESS (else the systemd default $XDG_RUNTIME_DIR/bus) and, for a
// unix:path= address, checks that the socket exists. It does not connect: the
// Secret Service check that follows does, over sd-bus.

enum SessionBusCheck {
    static let name = "session-bus"
    static let startAdvice = "start a session bus with gnome-keyring: log in to a desktop session, enable the user unit "
        + InstalledTools.secretServiceUnit + ", or run the command under " + InstalledTools.secretSession

    static func run(environment: KeygateEnvironment) -> DiagnosticResult {
        guard let address = environment.sessionBusAddress else {
            if let runtime = environment.runtimeDirectory, case .found(let info) = FileProbe.inspect(runtime + "/bus"),
               info.kind == .socket {
                return DiagnosticResult(name, .ok, "DBUS_SESSION_BUS_ADDRESS is unset; the systemd user bus \(runtime)/bus is there")
            }
            return DiagnosticResult(name, .fail, """
                DBUS_SESSION_BUS_ADDRESS is unset and there is no \(environment.runtimeDirectory ?? "$XDG_RUNTIME_DIR")/bus
                """,
                                    advice: startAdvice)
        }
        // An address is a ;-separated list of transports; the first unix:path= one is checked.
        for transport in address.split(separator: ";") {
            guard transport.hasPrefix("unix:") else { continue }
            for pair in transport.dropFirst("unix:".count).split(separator: ",") where pair.hasPrefix("path=") {
                let path = String(pair.dropFirst("path=".count))
                switch FileProbe.inspect(path) {
                case .found(let info) where info.kind == .socket:
                    return DiagnosticResult(name, .ok, "session bus at \(path)")
                case .found:
                    return DiagnosticResult(name, .fail, "DBUS_SESSION_BUS_ADDRESS names \(path), which is not a socket", advice: startAdvice)
                case .absent:
                    return DiagnosticResult(name, .fail, "DBUS_SESSION_BUS_ADDRESS names \(path), which does not exist (the bus is gone)",
                                            advice: startAdvice)
                case .denied, .error:
                    return DiagnosticResult(name, .warn, "cannot inspect the bus socket \(path)", advice: "check its permissions")
                }
            }
        }
        return DiagnosticResult(name, .ok, "DBUS_SESSION_BUS_ADDRESS=\(address) (not a unix:path= address: checked by the Secret Service step)")
    }
}
