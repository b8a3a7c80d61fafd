// Which TPM Keygate talks to, as a tpm2-tss TCTI configuration string
// ("device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=2321", "mssim:…"). The default
// is the kernel's resource manager. Root chooses another with
// `setup-host --tpm --tcti CONF`, which records it in the sealed file's header;
// test-hook builds also read KEYGATE_TEST_TCTI. Only validation and choice here:
// tctildr (TPMConnection) interprets the string.

package struct TPMTCTI: Equatable, Sendable {
    /// The kernel's TPM resource manager: several processes may use the TPM at once.
    package static let defaultConfiguration = "device:/dev/tpmrm0"

    /// The longest configuration accepted (the sealed file's header stores it).
    static let maxLength = 255

    let configuration: String

    /// `.param` for an empty, oversize or non-printable configuration, or one without a "name:" prefix
    /// ("device", "swtpm", "mssim", …).
    init(_ configuration: String) throws {
        let bytes = Array(configuration.utf8)
        guard !bytes.isEmpty, bytes.count <= TPMTCTI.maxLength, bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw KeychainError.param("""
                the TCTI '\(configuration.prefix(40))' is not a tpm2-tss TCTI configuration (printable, no spaces, at most \
                \(TPMTCTI.maxLength) characters): use e.g. device:/dev/tpmrm0 or swtpm:host=127.0.0.1,port=2321
                """)
        }
        guard let colon = configuration.firstIndex(of: ":"), colon != configuration.startIndex,
              configuration[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw KeychainError.param("""
                the TCTI '\(configuration)' needs a name before a colon: use e.g. device:/dev/tpmrm0 or \
                swtpm:host=127.0.0.1,port=2321
                """)
        }
        self.configuration = configuration
    }

    /// The kernel's resource manager (device:/dev/tpmrm0).
    static var standard: TPMTCTI { TPMTCTI(trusted: defaultConfiguration) }

    /// The TCTI for a new seal: the one asked for, else (test-hook builds) KEYGATE_TEST_TCTI, else the default.
    static func forSealing(requested: String?, environment: KeygateEnvironment) throws -> TPMTCTI {
        if let requested { return try TPMTCTI(requested) }
        if let override = try testOverride(environment) { return override }
        return standard
    }

    /// The TCTI for an existing sealed file: its header's, unless a test-hook build is told otherwise.
    static func forUnsealing(recorded: String, environment: KeygateEnvironment) throws -> TPMTCTI {
        if let override = try testOverride(environment) { return override }
        return try TPMTCTI(recorded)
    }

    /// The device node, for "device:PATH" (and "device" alone, which means /dev/tpm0 to tctildr).
    var devicePath: String? {
        if configuration == "device" { return "/dev/tpm0" }
        guard configuration.hasPrefix("device:") else { return nil }
        let path = String(configuration.dropFirst("device:".count))
        return path.isEmpty ? "/dev/tpm0" : path
    }

    private init(trusted: String) { configuration = trusted }

    /// KEYGATE_TEST_TCTI from the environment passed down (test-hook builds only; nil in release builds).
    private static func testOverride(_ environment: KeygateEnvironment) throws -> TPMTCTI? {
        if let text = environment.testHooks.tcti { return try TPMTCTI(text) }
        return nil
    }
}
