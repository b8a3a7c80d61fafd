// `keygate setup-host [--rotate] [--tpm [--tcti CONF]]` (root): creates the host key
// that device keys (this-device-only items) derive from; --rotate replaces it,
// invalidating every this-device-only item; --tpm seals it to a TPM2 (a fresh key,
// or the existing file key moved into the TPM). `make install` and the .deb
// postinst run it. Delegates to HostKey (and HostKey+TPM).

import Keygate

enum SetupHostCommand: KeygateCommand {
    static let rotate = OptionSpec.flag("--rotate", help: "Replace the host key; this-device-only items are invalidated.")
    static let tpm = OptionSpec.flag("--tpm", help: "Seal the host key to the TPM2 (moving an existing key file into it).")
    static let tcti = OptionSpec.value("--tcti", valueName: "CONF", help: """
        The TPM to use, as a tpm2-tss TCTI (default device:/dev/tpmrm0); needs --tpm.
        """)

    static let configuration = CommandConfiguration(
        commandName: "setup-host",
        abstract: "Create this host's key for this-device-only items (root).",
        discussion: """
            Creates /var/lib/keygate/host.key (32 random bytes, mode 0400, readable by root only) if it is absent. Device keys \
            for this-device-only items are derived from it, so a copy of the store taken to another host cannot open them. \
            `make install` runs this step.\n\nWith --tpm, the host key is sealed to this host's TPM2 instead and kept in \
            /var/lib/keygate/host.key.tpm; an existing host.key is moved into the TPM (sealed, checked, then the plain file is \
            removed), so its this-device-only items keep working. A copied disk then no longer carries the host key. If the TPM \
            is cleared, the sealed key is lost with it. Without a TPM, --tpm fails and changes nothing.\n\nWith --rotate, \
            replaces the key with a fresh one (inside the TPM if it is sealed): every this-device-only item sealed for the old \
            key becomes unreadable (invalidated), and users get the new device key at their next login.
            """,
        options: [rotate,
                  tpm,
                  tcti])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let tcti = args.value(Self.tcti)
        if tcti != nil, !args.flag(Self.tpm) {
            throw context.usageError("--tcti names the TPM for --tpm: add --tpm", configuration)
        }
        if args.flag(Self.tpm) {
            return try sealToTPM(tcti: tcti, rotate: args.flag(Self.rotate), environment: context.configuration)
        }
        let environment = context.configuration
        let path = HostKey.path(environment)
        if args.flag(Self.rotate) {
            try HostKey.rotate(environment: environment)
            warnInvalidated()
            Console.out("replaced \(HostKey.isSealed(environment) ? HostKey.sealedPath(environment) + " (sealed to the TPM)" : path)\n")
        } else if try HostKey.create(environment: environment) {
            Console.out("created \(path)\n")
        } else {
            Console.out("already present: \(HostKey.isSealed(environment) ? HostKey.sealedPath(environment) + " (sealed to the TPM)" : path)\n")
        }
        return 0
    }

    private static func sealToTPM(tcti: String?, rotate: Bool, environment: KeygateEnvironment) throws -> Int32 {
        let sealed = HostKey.sealedPath(environment)
        switch try HostKey.sealToTPM(tcti: tcti, rotate: rotate, environment: environment) {
        case .created:
            Console.out("created \(sealed) (sealed to the TPM)\n")
        case .migrated:
            Console.out("sealed the host key to the TPM in \(sealed) and removed \(HostKey.path(environment))\n")
        case .alreadySealed:
            Console.out("already sealed to the TPM: \(sealed)\n")
        case .retargeted:
            Console.out("the sealed host key in \(sealed) now opens through \(tcti ?? "the default TCTI")\n")
        case .rotated:
            warnInvalidated()
            Console.out("replaced \(sealed) (sealed to the TPM)\n")
        }
        return 0
    }

    private static func warnInvalidated() {
        Console.err("""
            warning: every this-device-only item sealed for the old host key is now invalidated (unreadable); users get the new \
            device key at their next login\n
            """)
    }
}
