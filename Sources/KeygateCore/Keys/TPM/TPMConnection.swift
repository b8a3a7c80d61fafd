// One open conversation with a TPM: a TCTI context (tctildr: "device:/dev/tpmrm0",
// "swtpm:host=…,port=…", …) and an ESAPI context on it. The class owns both and
// finalises them in deinit; it also flushes transient objects and frees ESAPI's
// output buffers. Every ESAPI call has a deadline, so a TPM that stops answering
// fails the call rather than hanging a login. Functions come from TSS2Functions.
internal import CTSS2

final class TPMConnection {
    /// How long one TPM command may take. An ECC primary takes milliseconds; a slow firmware TPM under
    /// load may take a few seconds. Past this, the call fails instead of hanging sshd's session hook.
    static let commandTimeoutMilliseconds: Int32 = 20_000

    let api: TSS2Functions
    let tcti: TPMTCTI
    private var tctiContext: OpaquePointer?
    private(set) var esys: OpaquePointer?

    /// Opens `tcti`. `.notAvailable` naming the TCTI when no TPM answers there.
    init(_ tcti: TPMTCTI) throws {
        self.tcti = tcti
        if let device = tcti.devicePath, !FileSystem.allows(.exists, device) {
            // No library load, no OpenSSL, for the common "no TPM here" case.
            throw TPMConnection.noTPM(tcti, "\(device) does not exist")
        }
        api = try TSS2Functions.shared()
        var context: OpaquePointer?
        let rc = tcti.configuration.withCString { api.tctiLdrInitialize($0, &context) }
        guard rc == 0, let context else {
            throw TPMConnection.noTPM(tcti, api.describe(rc))
        }
        tctiContext = context
        var esysContext: OpaquePointer?
        let erc = api.esysInitialize(&esysContext, context, nil)
        guard erc == 0, let esysContext else {
            throw KeychainError.notAvailable("""
                could not start ESAPI on the TPM at \(tcti.configuration): \(api.describe(erc)); check `tpm2_getrandom 8 -T \
                \(tcti.configuration)`
                """)
        }
        esys = esysContext
        _ = api.esysSetTimeout(esysContext, TPMConnection.commandTimeoutMilliseconds)
    }

    deinit {
        if esys != nil { api.esysFinalize(&esys) }
        if tctiContext != nil { api.tctiLdrFinalize(&tctiContext) }
    }

    /// Asks the TPM for 8 random bytes: proof that something answers at the TCTI.
    func ping() throws {
        var out: UnsafeMutablePointer<TPM2B_DIGEST>?
        let rc = api.esysGetRandom(esys, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), 8, &out)
        release(out)
        guard rc == 0 else { throw TPMConnection.noTPM(tcti, api.describe(rc)) }
    }

    /// Removes a transient object from the TPM (best effort: the resource manager flushes on close anyway).
    func flush(_ handle: ESYS_TR) {
        _ = api.esysFlushContext(esys, handle)
    }

    /// Frees a buffer ESAPI allocated for an output, after overwriting `wipeBytes` bytes of it.
    func release<T>(_ pointer: UnsafeMutablePointer<T>?, wipe: Bool = false) {
        guard let pointer else { return }
        if wipe { Sodium.wipe(UnsafeMutableRawBufferPointer(start: pointer, count: MemoryLayout<T>.size)) }
        api.esysFree(pointer)
    }

    static func noTPM(_ tcti: TPMTCTI, _ why: String) -> KeychainError {
        .notAvailable("""
            no TPM answers at \(tcti.configuration) (\(why)): this host has no TPM2, it is disabled in the firmware, or the \
            kernel's resource manager (/dev/tpmrm0) is missing; keep the host key as a root-only file (plain `sudo keygate \
            setup-host`), or name the TPM with --tcti
            """)
    }
}
