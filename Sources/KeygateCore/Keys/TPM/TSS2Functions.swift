// The tpm2-tss functions Keygate calls, found at run time: libtss2-tctildr,
// libtss2-esys and libtss2-mu are dlopen'ed and each function is dlsym'ed into a
// `@convention(c)` type. Nothing links them, so a keygate run that never touches a
// TPM never loads them (nor the OpenSSL behind ESAPI). Loaded once per process, on
// first use, and never unloaded (OpenSSL does not like dlclose). The types come
// from the header-only CTSS2 module; the calls themselves are made in TPMConnection
// and TPMSealing.
internal import CTSS2
internal import Glibc

/// One table of function pointers into tpm2-tss. The C names appear once, here.
final class TSS2Functions: @unchecked Sendable {
    // @unchecked: every stored property is an immutable C function pointer, set in init.

    typealias TctiLdrInitialize = @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?) -> TSS2_RC
    typealias TctiLdrFinalize = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void
    typealias EsysInitialize = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?, OpaquePointer?,
                                               UnsafeMutablePointer<TSS2_ABI_VERSION>?) -> TSS2_RC
    typealias EsysFinalize = @convention(c) (UnsafeMutablePointer<OpaquePointer?>?) -> Void
    typealias EsysSetTimeout = @convention(c) (OpaquePointer?, Int32) -> TSS2_RC
    typealias EsysFree = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias EsysFlushContext = @convention(c) (OpaquePointer?, ESYS_TR) -> TSS2_RC
    typealias EsysGetRandom = @convention(c) (OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, UInt16,
                                              UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_DIGEST>?>?) -> TSS2_RC
    typealias EsysCreatePrimary = @convention(c) (
        OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
        UnsafePointer<TPM2B_SENSITIVE_CREATE>?, UnsafePointer<TPM2B_PUBLIC>?, UnsafePointer<TPM2B_DATA>?,
        UnsafePointer<TPML_PCR_SELECTION>?, UnsafeMutablePointer<ESYS_TR>?,
        UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PUBLIC>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_CREATION_DATA>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_DIGEST>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<TPMT_TK_CREATION>?>?) -> TSS2_RC
    typealias EsysCreate = @convention(c) (
        OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
        UnsafePointer<TPM2B_SENSITIVE_CREATE>?, UnsafePointer<TPM2B_PUBLIC>?, UnsafePointer<TPM2B_DATA>?,
        UnsafePointer<TPML_PCR_SELECTION>?,
        UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PRIVATE>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_PUBLIC>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_CREATION_DATA>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_DIGEST>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<TPMT_TK_CREATION>?>?) -> TSS2_RC
    typealias EsysLoad = @convention(c) (OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
                                         UnsafePointer<TPM2B_PRIVATE>?, UnsafePointer<TPM2B_PUBLIC>?,
                                         UnsafeMutablePointer<ESYS_TR>?) -> TSS2_RC
    typealias EsysUnseal = @convention(c) (OpaquePointer?, ESYS_TR, ESYS_TR, ESYS_TR, ESYS_TR,
                                           UnsafeMutablePointer<UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?>?) -> TSS2_RC
    typealias MUMarshalPublic = @convention(c) (UnsafePointer<TPM2B_PUBLIC>?, UnsafeMutablePointer<UInt8>?, Int,
                                                UnsafeMutablePointer<Int>?) -> TSS2_RC
    typealias MUUnmarshalPublic = @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?,
                                                  UnsafeMutablePointer<TPM2B_PUBLIC>?) -> TSS2_RC
    typealias MUMarshalPrivate = @convention(c) (UnsafePointer<TPM2B_PRIVATE>?, UnsafeMutablePointer<UInt8>?, Int,
                                                 UnsafeMutablePointer<Int>?) -> TSS2_RC
    typealias MUUnmarshalPrivate = @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?,
                                                   UnsafeMutablePointer<TPM2B_PRIVATE>?) -> TSS2_RC
    typealias RCDecode = @convention(c) (TSS2_RC) -> UnsafePointer<CChar>?

    /// The C function is `Tss2_TctiLdr_Initialize(3)`.
    let tctiLdrInitialize: TctiLdrInitialize
    let tctiLdrFinalize: TctiLdrFinalize
    let esysInitialize: EsysInitialize
    let esysFinalize: EsysFinalize
    let esysSetTimeout: EsysSetTimeout
    let esysFree: EsysFree
    let esysFlushContext: EsysFlushContext
    let esysGetRandom: EsysGetRandom
    let esysCreatePrimary: EsysCreatePrimary
    let esysCreate: EsysCreate
    let esysLoad: EsysLoad
    let esysUnseal: EsysUnseal
    let marshalPublic: MUMarshalPublic
    let unmarshalPublic: MUUnmarshalPublic
    let marshalPrivate: MUMarshalPrivate
    let unmarshalPrivate: MUUnmarshalPrivate
    /// `Tss2_RC_Decode` from libtss2-rc, for messages; nil when that library is missing.
    let rcDecode: RCDecode?

    /// The libraries, by soname (the runtime packages install these; the -dev package only adds the
    /// unversioned links).
    static let tctildrLibrary = "libtss2-tctildr.so.0"
    static let esysLibrary = "libtss2-esys.so.0"
    static let muLibrary = "libtss2-mu.so.0"
    static let rcLibrary = "libtss2-rc.so.0"

    /// The table, loaded on first use (a Swift global is initialised lazily and once).
    static func shared() throws -> TSS2Functions {
        try loaded.get()
    }

    private static let loaded: Result<TSS2Functions, KeychainError> = {
        do { return .success(try TSS2Functions()) } catch let error as KeychainError { return .failure(error) } catch {
            return .failure(KeychainError.notAvailable("could not load tpm2-tss: \(error)"))
        }
    }()

    private init() throws {
        // tpm2-tss logs its own errors to stderr (read from TSS2_LOG at its first message). Keygate reports
        // every failure itself, with advice, so the library is quiet unless the administrator set TSS2_LOG.
        setenv("TSS2_LOG", "all+none", 0)
        let tctildr = try Self.open(Self.tctildrLibrary)
        let esys = try Self.open(Self.esysLibrary)
        let mu = try Self.open(Self.muLibrary)
        tctiLdrInitialize = try Self.symbol(tctildr, "Tss2_TctiLdr_Initialize", Self.tctildrLibrary)
        tctiLdrFinalize = try Self.symbol(tctildr, "Tss2_TctiLdr_Finalize", Self.tctildrLibrary)
        esysInitialize = try Self.symbol(esys, "Esys_Initialize", Self.esysLibrary)
        esysFinalize = try Self.symbol(esys, "Esys_Finalize", Self.esysLibrary)
        esysSetTimeout = try Self.symbol(esys, "Esys_SetTimeout", Self.esysLibrary)
        esysFree = try Self.symbol(esys, "Esys_Free", Self.esysLibrary)
        esysFlushContext = try Self.symbol(esys, "Esys_FlushContext", Self.esysLibrary)
        esysGetRandom = try Self.symbol(esys, "Esys_GetRandom", Self.esysLibrary)
        esysCreatePrimary = try Self.symbol(esys, "Esys_CreatePrimary", Self.esysLibrary)
        esysCreate = try Self.symbol(esys, "Esys_Create", Self.esysLibrary)
        esysLoad = try Self.symbol(esys, "Esys_Load", Self.esysLibrary)
        esysUnseal = try Self.symbol(esys, "Esys_Unseal", Self.esysLibrary)
        marshalPublic = try Self.symbol(mu, "Tss2_MU_TPM2B_PUBLIC_Marshal", Self.muLibrary)
        unmarshalPublic = try Self.symbol(mu, "Tss2_MU_TPM2B_PUBLIC_Unmarshal", Self.muLibrary)
        marshalPrivate = try Self.symbol(mu, "Tss2_MU_TPM2B_PRIVATE_Marshal", Self.muLibrary)
        unmarshalPrivate = try Self.symbol(mu, "Tss2_MU_TPM2B_PRIVATE_Unmarshal", Self.muLibrary)
        if let rc = dlopen(Self.rcLibrary, RTLD_NOW | RTLD_LOCAL), let found = dlsym(rc, "Tss2_RC_Decode") {
            rcDecode = unsafeBitCast(found, to: RCDecode.self)
        } else {
            rcDecode = nil
        }
    }

    /// A readable name for a TSS2 response code ("tpm:parameter(2):integrity check failed"), or its hex.
    func describe(_ rc: TSS2_RC) -> String {
        let hex = "0x" + String(rc, radix: 16)
        guard let rcDecode, let text = rcDecode(rc) else { return hex }
        return String(cString: text) + " (" + hex + ")"
    }

    private static func open(_ name: String) throws -> UnsafeMutableRawPointer {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "not found"
            throw KeychainError.notAvailable("""
                could not load \(name) (\(why)): TPM sealing needs tpm2-tss; install it with `sudo apt-get install \
                libtss2-esys-3.0.2-0 libtss2-tctildr0 libtss2-mu0` (or your distribution's tpm2-tss)
                """)
        }
        return handle
    }

    private static func symbol<F>(_ handle: UnsafeMutableRawPointer, _ name: String, _ library: String) throws -> F {
        guard let found = dlsym(handle, name) else {
            throw KeychainError.notAvailable("\(library) has no \(name): this tpm2-tss is too old or broken; install tpm2-tss 3.x")
        }
        return unsafeBitCast(found, to: F.self)
    }
}
