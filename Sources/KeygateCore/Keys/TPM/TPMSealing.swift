// Sealing a small secret to a TPM2 and opening it again. Seal: CreatePrimary of the
// standard ECC P-256 storage root key (TCG Provisioning Guidance's SRK template) in
// the owner hierarchy, then Create of a keyedhash "sealed data object" whose
// sensitive part is the secret; the TPM returns it as a public area and a private
// area encrypted under the SRK, which are marshalled (libtss2-mu) for the disk.
// Unseal: the same CreatePrimary (same template + same owner seed = same SRK), Load,
// Unseal, straight into locked memory. When the TPM's seeds change (TPM2_Clear,
// a wiped swtpm state), the SRK differs and Load fails: that maps to a clear error.
// The calls go through TPMConnection; the file around the areas is SealedHostKeyFile.
internal import CTSS2

/// A sealed data object as the TPM returned it: marshalled TPM2B_PUBLIC and TPM2B_PRIVATE.
struct SealedTPMObject: Equatable, Sendable {
    var publicArea: [UInt8]
    var privateArea: [UInt8]
}

enum TPMSealing {
    /// The parent template the sealed file names (SealedHostKeyFile.template).
    static let eccP256StorageRootTemplate: UInt8 = 1

    /// The largest secret a sealed data object carries on every TPM (MAX_SYM_DATA is at least 128).
    static let maxSecretBytes = 128

    // TPM 2.0 constants (Part 2), spelled out because the header's cast macros do not import into Swift.
    private static let algKeyedHash: TPM2_ALG_ID = 0x0008
    private static let algECC: TPM2_ALG_ID = 0x0023
    private static let algSHA256: TPM2_ALG_ID = 0x000B
    private static let algAES: TPM2_ALG_ID = 0x0006
    private static let algCFB: TPM2_ALG_ID = 0x0043
    private static let algNull: TPM2_ALG_ID = 0x0010
    private static let curveNISTP256: TPM2_ECC_CURVE = 0x0003
    private static let fixedTPM: TPMA_OBJECT = 0x0000_0002
    private static let fixedParent: TPMA_OBJECT = 0x0000_0010
    private static let sensitiveDataOrigin: TPMA_OBJECT = 0x0000_0020
    private static let userWithAuth: TPMA_OBJECT = 0x0000_0040
    private static let noDA: TPMA_OBJECT = 0x0000_0400
    private static let restricted: TPMA_OBJECT = 0x0001_0000
    private static let decrypt: TPMA_OBJECT = 0x0002_0000

    /// Seals `secret` (at most 128 bytes) under the owner hierarchy's standard SRK.
    static func seal(_ secret: SecureBytes, on tpm: TPMConnection) throws -> SealedTPMObject {
        guard secret.count > 0, secret.count <= maxSecretBytes else {
            throw KeychainError.param("internal: a TPM sealed object holds 1 to \(maxSecretBytes) bytes, not \(secret.count)")
        }
        let parent = try createStorageRoot(on: tpm)
        defer { tpm.flush(parent) }

        // The sensitive input lives in locked memory (SecureBytes), laid out as the C struct, and is
        // zeroed when `holder` goes.
        let holder = try SecureBytes(count: MemoryLayout<TPM2B_SENSITIVE_CREATE>.stride)
        var template = sealedObjectTemplate()
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        let rc: TSS2_RC = try holder.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress, Int(bitPattern: base) % MemoryLayout<TPM2B_SENSITIVE_CREATE>.alignment == 0 else {
                throw KeychainError.notAvailable("internal: locked memory for the TPM input is misaligned; report this as a Keygate bug")
            }
            let sensitive = base.bindMemory(to: TPM2B_SENSITIVE_CREATE.self, capacity: 1)
            sensitive.pointee.sensitive.data.size = UInt16(secret.count)
            secret.withUnsafeBytes { source in
                withUnsafeMutableBytes(of: &sensitive.pointee.sensitive.data.buffer) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<min(source.count, target.count)]))
                }
            }
            return tpm.api.esysCreate(tpm.esys, parent, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
                                      sensitive, &template, &outsideInfo, &creationPCR, &outPrivate, &outPublic, nil, nil, nil)
        }
        defer {
            tpm.release(outPrivate)
            tpm.release(outPublic)
        }
        guard rc == 0, let outPrivate, let outPublic else {
            throw KeychainError.notAvailable("""
                the TPM at \(tpm.tcti.configuration) refused to seal the host key: \(tpm.api.describe(rc)); check it with \
                `tpm2_getcap properties-variable -T \(tpm.tcti.configuration)` (a TPM in lockout or with an owner password cannot \
                be used)
                """).because(.tpmRefused)
        }
        let api = tpm.api
        return SealedTPMObject(
            publicArea: try marshal(maxBytes: MemoryLayout<TPM2B_PUBLIC>.size) { api.marshalPublic(outPublic, $0, $1, $2) },
            privateArea: try marshal(maxBytes: MemoryLayout<TPM2B_PRIVATE>.size) { api.marshalPrivate(outPrivate, $0, $1, $2) })
    }

    /// Opens a sealed object into locked memory. `.notAvailable` saying the TPM's state was reset when
    /// the TPM refuses to load it (its seeds changed), naming `what` (the sealed file).
    static func unseal(_ object: SealedTPMObject, on tpm: TPMConnection, what: String) throws -> SecureBytes {
        let item = try load(object, on: tpm, what: what)
        defer { tpm.flush(item) }
        var out: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        let rc = tpm.api.esysUnseal(tpm.esys, item, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &out)
        defer { tpm.release(out, wipe: true) }
        guard rc == 0, let out else { throw refused(rc, tpm, what) }
        let size = Int(out.pointee.size)
        guard size > 0, size <= MemoryLayout.size(ofValue: out.pointee.buffer) else {
            throw KeychainError.decode("""
                the TPM returned \(size) bytes for \(what): it is not a Keygate sealed key; run `sudo keygate setup-host --tpm \
                --rotate`
                """)
        }
        return try withUnsafeBytes(of: &out.pointee.buffer) { raw in
            try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[0..<size]))
        }
    }

    /// Loads the object and flushes it again, without reading its secret: whether this TPM still opens
    /// it (the doctor's check).
    static func verifyLoads(_ object: SealedTPMObject, on tpm: TPMConnection, what: String) throws {
        tpm.flush(try load(object, on: tpm, what: what))
    }

    // MARK: - Implementation

    private static func load(_ object: SealedTPMObject, on tpm: TPMConnection, what: String) throws -> ESYS_TR {
        let api = tpm.api
        var inPublic = TPM2B_PUBLIC()
        var inPrivate = TPM2B_PRIVATE()
        try unmarshal(object.publicArea, what: what) { api.unmarshalPublic($0, $1, $2, &inPublic) }
        try unmarshal(object.privateArea, what: what) { api.unmarshalPrivate($0, $1, $2, &inPrivate) }
        defer { withUnsafeMutableBytes(of: &inPrivate) { Sodium.wipe($0) } }
        let parent = try createStorageRoot(on: tpm)
        defer { tpm.flush(parent) }
        var handle = ESYS_TR(ESYS_TR_NONE)
        let rc = tpm.api.esysLoad(tpm.esys, parent, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
                                  &inPrivate, &inPublic, &handle)
        guard rc == 0 else { throw refused(rc, tpm, what) }
        return handle
    }

    /// The owner hierarchy's storage root key from the fixed template: deterministic while the owner
    /// seed is unchanged, so it is recreated for each use rather than persisted.
    private static func createStorageRoot(on tpm: TPMConnection) throws -> ESYS_TR {
        var inSensitive = TPM2B_SENSITIVE_CREATE()
        var inPublic = storageRootTemplate()
        var outsideInfo = TPM2B_DATA()
        var creationPCR = TPML_PCR_SELECTION()
        var handle = ESYS_TR(ESYS_TR_NONE)
        let rc = tpm.api.esysCreatePrimary(tpm.esys, ESYS_TR(ESYS_TR_RH_OWNER), ESYS_TR(ESYS_TR_PASSWORD),
                                           ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &inSensitive, &inPublic,
                                           &outsideInfo, &creationPCR, &handle, nil, nil, nil, nil)
        guard rc == 0 else {
            if isTCTIError(rc) { throw TPMConnection.noTPM(tpm.tcti, tpm.api.describe(rc)) }
            throw KeychainError.notAvailable("""
                the TPM at \(tpm.tcti.configuration) would not create its storage root key in the owner hierarchy: \
                \(tpm.api.describe(rc)); Keygate needs an owner hierarchy without a password (`tpm2_changeauth -c owner` to remove \
                one), and a TPM not in dictionary-attack lockout
                """).because(.tpmRefused)
        }
        return handle
    }

    /// TCG "TPM v2.0 Provisioning Guidance", storage root key, ECC NIST P-256: restricted decryption
    /// key, AES-128-CFB, SHA-256 name, no auth policy, unique x and y of 32 zero bytes.
    private static func storageRootTemplate() -> TPM2B_PUBLIC {
        var key = TPM2B_PUBLIC()
        key.publicArea.type = algECC
        key.publicArea.nameAlg = algSHA256
        key.publicArea.objectAttributes = fixedTPM | fixedParent | sensitiveDataOrigin | userWithAuth | noDA | restricted | decrypt
        var ecc = TPMS_ECC_PARMS()
        ecc.symmetric.algorithm = algAES
        ecc.symmetric.keyBits.aes = 128
        ecc.symmetric.mode.aes = algCFB
        ecc.scheme.scheme = algNull
        ecc.curveID = curveNISTP256
        ecc.kdf.scheme = algNull
        key.publicArea.parameters.eccDetail = ecc
        var point = TPMS_ECC_POINT()
        point.x.size = 32
        point.y.size = 32
        key.publicArea.unique.ecc = point
        return key
    }

    /// A sealed data object: keyedhash with no scheme, bound to this TPM and this parent, opened with
    /// the (empty) auth value: the sealed file itself is root's alone.
    private static func sealedObjectTemplate() -> TPM2B_PUBLIC {
        var object = TPM2B_PUBLIC()
        object.publicArea.type = algKeyedHash
        object.publicArea.nameAlg = algSHA256
        object.publicArea.objectAttributes = fixedTPM | fixedParent | userWithAuth | noDA
        var keyed = TPMS_KEYEDHASH_PARMS()
        keyed.scheme.scheme = algNull
        object.publicArea.parameters.keyedHashDetail = keyed
        return object
    }

    /// Marshals a TPM2B through `call` (a libtss2-mu *_Marshal function: buffer, size, offset).
    private static func marshal(maxBytes: Int, _ call: (UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>) -> TSS2_RC) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: maxBytes)
        var offset = 0
        let rc = buffer.withUnsafeMutableBufferPointer { call($0.baseAddress, $0.count, &offset) }
        guard rc == 0, offset <= buffer.count else {
            throw KeychainError.notAvailable("""
                could not marshal the TPM's answer (0x\(String(rc, radix: 16))): tpm2-tss is broken; reinstall libtss2-mu0
                """)
        }
        return Array(buffer[0..<offset])
    }

    /// Unmarshals a TPM2B through `call` (a libtss2-mu *_Unmarshal function); all of `bytes` must be used.
    private static func unmarshal(_ bytes: [UInt8], what: String, _ call: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>) -> TSS2_RC) throws {
        var offset = 0
        let rc = bytes.withUnsafeBufferPointer { call($0.baseAddress, $0.count, &offset) }
        guard rc == 0, offset == bytes.count else {
            throw KeychainError.decode("""
                \(what) holds a TPM object that does not parse: it is corrupt; restore it from a backup, or run `sudo keygate \
                setup-host --tpm --rotate` (this-device-only items sealed for the old host key stay unreadable)
                """)
        }
    }

    /// The error for a TPM that will not load or unseal the object.
    private static func refused(_ rc: TSS2_RC, _ tpm: TPMConnection, _ what: String) -> KeychainError {
        if isTCTIError(rc) { return TPMConnection.noTPM(tpm.tcti, tpm.api.describe(rc)) }
        return KeychainError.notAvailable("""
            the TPM at \(tpm.tcti.configuration) no longer opens the host key sealed in \(what) (\(tpm.api.describe(rc))): the \
            TPM was cleared or its state reset (new seeds), or the file comes from another machine. The host key is gone, so \
            this-device-only items cannot be opened again. Run `sudo keygate setup-host --tpm --rotate` to make a new host key, \
            then add those items again
            """).because(.tpmRefused)
    }

    /// Whether `rc` comes from the TCTI layer (the TPM did not answer), as opposed to the TPM refusing.
    private static func isTCTIError(_ rc: TSS2_RC) -> Bool {
        (rc >> 16) & 0xFF == 10
    }
}
