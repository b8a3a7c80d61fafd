// What fprintd says about the fingerprint reader and a user's enrolled fingers, asked over
// the system bus (DBUS_SYSTEM_BUS_ADDRESS in the caller's KeygateEnvironment, else
// /run/dbus/system_bus_socket) with a
// deadline: the gatekeeper asks before it runs pam_fprintd, so that no reader, no finger,
// a stopped fprintd or a hung one (SIGSTOP) is a clear error within seconds, not a PAM
// stack that waits on sd-bus's 25-second timeouts; status, doctor and LAContext ask too.
// It delegates the bus to SystemBusConnection (sd-bus, one call at a time), its own narrow
// client: the setuid gatekeeper, which asks it, links no Secret Service client and no SQLite.
import KeygateCore

/// A reader and the fingers enrolled on it, as fprintd reports them.
package struct FprintdStatus: Sendable, Equatable {
    /// The reader's name ("Virtual device for debugging"), nil when fprintd reports none.
    package var device: String?
    /// The user's enrolled fingers on that reader (fprintd's names, e.g. "right-index-finger").
    package var enrolledFingers: [String]
}

package enum FprintdProbe {
    /// fprintd's storage of enrolled prints, root-only: /var/lib/fprint, or the test hook's folder.
    /// Its digest is root's (the gatekeeper's EnrolledPrints); a client only asks whether it exists.
    package static func storageRoot(_ environment: KeygateEnvironment) -> String {
        environment.testHooks.fprintDirectory ?? "/var/lib/fprint"
    }

    static let busName = "net.reactivated.Fprint"
    package static let defaultDeadline = BusDeadline(.seconds(5))

    /// The default reader and `userName`'s fingers on it. Throws .notAvailable, worded with
    /// the fix, when the system bus or fprintd cannot be reached or does not answer in time.
    package static func status(userName: String, environment: KeygateEnvironment,
                               deadline: BusDeadline = defaultDeadline) throws -> FprintdStatus {
        let bus: SystemBusConnection
        switch SystemBusConnection.open(address: environment.systemBusAddress, deadline: deadline) {
        case .success(let opened): bus = opened
        case .failure:
            throw KeychainError.notAvailable("""
                the system bus (\(environment.systemBusAddress)) cannot be reached, so fprintd cannot be asked for your fingerprint: check that \
                dbus is running
                """)
        }
        let devices = try call(bus, path: "/net/reactivated/Fprint/Manager", interface: "net.reactivated.Fprint.Manager",
                               method: "GetDevices", arguments: [], reply: .array("o"), action: "list the fingerprint readers",
                               deadline)
        guard let path = devices.first, !path.isEmpty else {
            return FprintdStatus(device: nil, enrolledFingers: [])
        }
        // The reader's name only words messages: without it, its path does.
        let name = bus.call(destination: busName, path: path, interface: "org.freedesktop.DBus.Properties", method: "Get",
                            arguments: ["net.reactivated.Fprint.Device", "name"], reply: .stringInVariant, deadline: deadline)
        var deviceName = path
        if case .success(let names) = name, let first = names.first { deviceName = first }
        do {
            let fingers = try call(bus, path: path, interface: "net.reactivated.Fprint.Device", method: "ListEnrolledFingers",
                                   arguments: [userName], reply: .array("s"), action: "list your enrolled fingers", deadline)
            return FprintdStatus(device: deviceName, enrolledFingers: fingers)
        } catch FprintdError.noEnrolledPrints {
            return FprintdStatus(device: deviceName, enrolledFingers: [])
        }
    }

    private enum FprintdError: Error { case noEnrolledPrints }

    private static func call(_ bus: SystemBusConnection, path: String, interface: String, method: String, arguments: [String],
                             reply: SystemBusConnection.Reply, action: String, _ deadline: BusDeadline) throws -> [String] {
        switch bus.call(destination: busName, path: path, interface: interface, method: method, arguments: arguments, reply: reply,
                        deadline: deadline) {
        case .success(let strings): return strings
        case .failure(let info):
            if info.name == "net.reactivated.Fprint.Error.NoEnrolledPrints" { throw FprintdError.noEnrolledPrints }
            if info.name == "org.freedesktop.DBus.Error.ServiceUnknown" || info.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                throw KeychainError.notAvailable("""
                    fprintd is not running, so no fingerprint can be read: start it (`systemctl start fprintd`), or install it \
                    (Debian: `sudo apt-get install fprintd libpam-fprintd`)
                    """)
            }
            if info.errno == SystemErrno.timedOut.code || info.name == "org.freedesktop.DBus.Error.NoReply" || info.name == "org.freedesktop.DBus.Error.Timeout" {
                throw KeychainError.notAvailable("""
                    fprintd did not answer within \(deadline.limitText) when asked to \(action): it may be hung; restart it \
                    (`systemctl restart fprintd`)
                    """)
            }
            throw KeychainError.notAvailable("""
                fprintd could not \(action) (\(info.name ?? "error"): \(info.message)): check `fprintd-list $USER` and the \
                system log
                """)
        }
    }
}
