// `keygate setup-host [--rotate]` (root): creates the host key that device keys
// (this-device-only items) derive from; --rotate replaces it, invalidating every
// this-device-only item. `make install` runs it. Delegates to HostKey.

import Keygate

enum SetupHostCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup-host",
        abstract: "Create this host's key for this-device-only items (root).",
        discussion: "Creates /var/lib/keygate/host.key (32 random bytes, mode 0400, readable by root only) if it is absent. Device keys for this-device-only items are derived from it, so a copy of the store taken to another host cannot open them. `make install` runs this step.\n\nWith --rotate, replaces the key with a fresh one: every this-device-only item sealed for the old key becomes unreadable (invalidated), and users get the new device key at their next login.",
        options: [.flag("--rotate", help: "Replace the host key; this-device-only items are invalidated.")])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let path = HostKey.path
        if args.flag("--rotate") {
            try HostKey.rotate()
            Console.err("warning: every this-device-only item sealed for the old host key is now invalidated (unreadable); users get the new device key at their next login\n")
            Console.out("replaced \(path)\n")
        } else if try HostKey.create() {
            Console.out("created \(path)\n")
        } else {
            Console.out("already present: \(path)\n")
        }
        return 0
    }
}
