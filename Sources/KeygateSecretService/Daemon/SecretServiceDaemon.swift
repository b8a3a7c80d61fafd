// keygate-secret-service's program: its options, the bus connection, the name, and the loop.
// Each method call is decoded (CallDecoder: a typed call or a typed refusal; the calls of a lookup
// read straight from the message, the rest as a BusValue tree) and handed to the host; the reply
// goes out at once (a lookup's written straight into the message), then the signals the call caused. A connection that leaves
// the bus takes its sessions, prompts and authorizations with it (NameOwnerChanged). The loop
// wakes at least once a second to notice the keychain locking or unlocking from outside (pam_keygate
// at login and logout, `keygate lock`) and to report prompts that workers finished.
//
// Started with no arguments it runs in the foreground and takes org.freedesktop.secrets if
// nobody has it; `--replace` takes it from a provider that allows it. It leaves when another
// takes the name from it, or when the bus goes away.
import Keygate
import KeygateCore

package enum SecretServiceDaemon {
    package static let busName = "org.freedesktop.secrets"
    static let usage = """
        Usage: keygate-secret-service [--replace]

        Serves the Secret Service API (org.freedesktop.secrets) on the session bus from Keygate's
        keychain (the embedded store). Runs in the foreground.

          --replace   take the name from the provider that has it (where it allows that)
          --version   print the version
          -h, --help  print this help

        """

    /// Runs the daemon; returns the exit status. `arguments`: argv[1...].
    package static func run(arguments: [String], environment: KeygateEnvironment) -> Int32 {
        var replace = false
        for argument in arguments {
            switch argument {
            case "--replace": replace = true
            case "-h", "--help":
                _ = Descriptor.write(usage, to: 1)
                return 0
            case "--version":
                _ = Descriptor.write("keygate-secret-service 0.1.0\n", to: 1)
                return 0
            default:
                log("unknown option \(argument)\n\n" + usage)
                return 2
            }
        }
        guard let address = BusServer.sessionBusAddress(environment) else {
            log("no session bus: DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus does not exist; start it from a "
                + "desktop session, or with dbus-run-session")
            return 1
        }
        let prompter = DaemonPrompter.choose(environment)
        let host: SecretServiceHost
        do {
            let keychain = try ClientKeychain(environment: environment, prompter: prompter)
            let authorizer: any ItemAuthorizer = prompter.map { GateAuthorizer(prompter: $0, environment: environment) }
                ?? DismissingAuthorizer()
            host = SecretServiceHost(keychain: keychain, authorizer: authorizer, canAsk: prompter != nil)
        } catch let error as KeychainError {
            log("cannot open the keychain: \(error.message)")
            return 1
        } catch {
            log("cannot open the keychain: \(error)")
            return 1
        }
        let server: BusServer
        let lost = LostName()
        do {
            server = try BusServer(address: address)
            try server.serve(prefix: "/") { call in
                handle(call, host: host, server: server)
                return true
            }
            try server.onSignal(sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                                member: "NameOwnerChanged") { arguments in
                // A unique name whose owner went: that connection left the bus.
                let name = arguments.child(0)?.string ?? "", newOwner = arguments.child(2)?.string ?? ""
                if name.hasPrefix(":"), newOwner.isEmpty { host.clientLeft(name) }
            }
            try server.onSignal(sender: "org.freedesktop.DBus", path: nil, interface: "org.freedesktop.DBus",
                                member: "NameLost") { arguments in
                if arguments.child(0)?.string == busName { lost.value = true }
            }
            host.describeClient = { name in describe(name, server: server) }
            try server.requestName(busName, replace: replace)
        } catch let error {
            if error.nameIsTaken {
                log(replace ? "the Secret Service provider that owns \(busName) does not let another take it: stop it first"
                    : "another Secret Service provider owns \(busName): stop it, or start keygate-secret-service --replace")
                return 3
            }
            log(error.description)
            return 1
        }
        log("serving \(busName) on \(address) from \(host.keychain.dataDirectory) (\(host.keychain.isLocked ? "locked" : "unlocked"))")
        while true {
            let r = server.process()
            if r < 0 {
                log("the session bus went away: leaving")
                return 0
            }
            // One message, then wait, as sd-event drives sd-bus: no second pass to hear "nothing
            // more" (a recvmsg failing with EAGAIN after every call). `wait` returns at once when
            // a message is queued, the socket is readable, or sd-bus has work due.
            host.collectOutcomes()
            send(host.takeSignals(), server: server)
            if lost.value {
                log("another provider took \(busName): leaving")
                return 0
            }
            if server.wait(host.hasPromptsRunning ? .milliseconds(50) : .seconds(1)) < 0 {
                log("the session bus went away: leaving")
                return 0
            }
        }
    }

    /// One method call: decoded, answered, and the signals it caused sent after the reply.
    private static func handle(_ call: BusCall, host: SecretServiceHost, server: BusServer) {
        // The calls of a lookup are read straight from the message; every other call as a tree.
        let decoded = CallDecoder.decodeHot(path: call.path, interface: call.interface, member: call.member,
                                            signature: call.signature, reader: call.reader)
            ?? CallDecoder.decode(path: call.path, interface: call.interface, member: call.member, signature: call.signature,
                                  arguments: call.arguments)
        switch decoded {
        case .failure(let refusal):
            server.replyError(to: call, name: refusal.errorName, message: refusal.message)
        case .success(let decoded):
            switch host.handle(decoded, sender: call.sender) {
            case .success(let reply):
                let sent: Bool
                if case .value(let value) = reply { sent = server.reply(to: call, value) } else {
                    sent = server.reply(to: call) { reply.write(to: $0) }
                }
                if !sent {
                    server.replyError(to: call, name: SecretServiceErrorName.failed, message: "the reply could not be sent")
                }
            case .failure(let error):
                server.replyError(to: call, name: error.name, message: error.message)
            }
        }
        send(host.takeSignals(), server: server)
    }

    private static func send(_ signals: [(String, String, String, BusValue)], server: BusServer) {
        for (path, interface, member, arguments) in signals { server.emit(path: path, interface: interface, member: member, arguments) }
    }

    /// A client's process id and program, as the bus daemon and the kernel report them (advisory).
    private static func describe(_ name: String, server: BusServer) -> (pid: UInt32, program: String) {
        guard let answer = server.call(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                       interface: "org.freedesktop.DBus", member: "GetConnectionUnixProcessID",
                                       .tuple([.string(name)]), timeout: .seconds(1)),
              let pid = answer.child(0)?.uint32 else { return (0, "") }
        return (pid, FileSystem.linkTarget("/proc/\(pid)/exe") ?? "")
    }

    static func log(_ line: String) {
        _ = Descriptor.write("keygate-secret-service: " + line + "\n", to: 2)
    }

    /// Set by the NameLost signal's handler, read by the loop (one thread: the loop's).
    private final class LostName {
        var value = false
    }
}
