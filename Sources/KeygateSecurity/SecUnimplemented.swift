// The parts of Apple's Security framework a keychain wrapper may name but Keygate does not
// provide: cryptographic keys (SecKey), certificates, identities, trust and policies,
// PKCS #12, and shared web credentials. Keygate stores passwords only. Each is declared
// with Apple's signature so that code compiles, and refuses at run time with
// errSecUnimplemented (an NSOSStatusErrorDomain CFError for the calls that take an error
// out-parameter), never a silent success. Delegates nothing.

/// Apple's opaque key, certificate, identity, trust and policy types. Keygate never makes one.
public final class SecKey: Sendable { private init() {} }
public final class SecCertificate: Sendable { private init() {} }
public final class SecIdentity: Sendable { private init() {} }
public final class SecTrust: Sendable { private init() {} }
public final class SecPolicy: Sendable { private init() {} }

/// Apple's `SecKeyAlgorithm` (a CFString), with the algorithms wrappers name most.
public struct SecKeyAlgorithm: RawRepresentable, Hashable, Sendable {
    public let rawValue: CFString
    public init(rawValue: CFString) { self.rawValue = rawValue }
    public static let ecdsaSignatureMessageX962SHA256 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
    public static let ecdsaSignatureDigestX962SHA256 = SecKeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962:SHA256")
    public static let rsaSignatureMessagePKCS1v15SHA256 = SecKeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA256")
    public static let rsaEncryptionOAEPSHA256 = SecKeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA256")
    public static let eciesEncryptionCofactorVariableIVX963SHA256AESGCM = SecKeyAlgorithm(rawValue: """
        algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV
        """)
    public static let eciesEncryptionStandardX963SHA256AESGCM = SecKeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM")
}

/// Apple's `SecKeyOperationType`.
public enum SecKeyOperationType: Int, Sendable {
    case sign = 0, verify = 1, encrypt = 2, decrypt = 3, keyExchange = 4
}

enum SecUnimplemented {
    static let message = """
        Keygate stores generic and internet passwords only: keys, certificates, identities, trust and shared web \
        credentials are not implemented (errSecUnimplemented). Store key bytes as a generic password.
        """

    /// Records the advice and fills an Apple error out-parameter.
    static func refuse(_ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) {
        SecLastFailure.record(errSecUnimplemented, message)
        error?.pointee = Unmanaged.passRetained(NSError(domain: NSOSStatusErrorDomain, code: Int(errSecUnimplemented),
                                                        userInfo: [NSLocalizedDescriptionKey: message]))
    }

    static func status() -> OSStatus {
        SecLastFailure.record(errSecUnimplemented, message)
        return errSecUnimplemented
    }
}

// MARK: SecKey

public func SecKeyGetTypeID() -> CFTypeID { 302 }

public func SecKeyCreateRandomKey(_ parameters: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    SecUnimplemented.refuse(error); return nil
}

public func SecKeyCreateWithData(_ keyData: CFData, _ attributes: CFDictionary,
                                 _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    SecUnimplemented.refuse(error); return nil
}

/// Keygate has no keys, so there is never a public key to copy (Apple returns nil too when there is none).
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? { nil }

public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    SecUnimplemented.refuse(error); return nil
}

public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? { nil }

public func SecKeyIsAlgorithmSupported(_ key: SecKey, _ operation: SecKeyOperationType, _ algorithm: SecKeyAlgorithm) -> Bool { false }

public func SecKeyCreateSignature(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ dataToSign: CFData,
                                  _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    SecUnimplemented.refuse(error); return nil
}

public func SecKeyVerifySignature(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ signedData: CFData, _ signature: CFData,
                                  _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> Bool {
    SecUnimplemented.refuse(error); return false
}

public func SecKeyCreateEncryptedData(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ plaintext: CFData,
                                      _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    SecUnimplemented.refuse(error); return nil
}

public func SecKeyCreateDecryptedData(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ ciphertext: CFData,
                                      _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    SecUnimplemented.refuse(error); return nil
}

// MARK: Certificates, identities, trust, PKCS #12

public func SecCertificateGetTypeID() -> CFTypeID { 303 }
public func SecIdentityGetTypeID() -> CFTypeID { 304 }
public func SecTrustGetTypeID() -> CFTypeID { 305 }
public func SecPolicyGetTypeID() -> CFTypeID { 306 }

/// Apple returns nil for data that is not a certificate; here every input is refused that way.
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    SecLastFailure.record(errSecUnimplemented, SecUnimplemented.message); return nil
}

public func SecIdentityCopyPrivateKey(_ identityRef: SecIdentity, _ privateKeyRef: UnsafeMutablePointer<SecKey?>) -> OSStatus {
    SecUnimplemented.status()
}

public func SecIdentityCopyCertificate(_ identityRef: SecIdentity, _ certificateRef: UnsafeMutablePointer<SecCertificate?>) -> OSStatus {
    SecUnimplemented.status()
}

/// Apple's option key for SecPKCS12Import.
public let kSecImportExportPassphrase: CFString = "passphrase"

public func SecPKCS12Import(_ pkcs12_data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    SecUnimplemented.status()
}

public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> Bool {
    SecUnimplemented.refuse(error); return false
}

public func SecPolicyCreateBasicX509() -> SecPolicy? {
    SecLastFailure.record(errSecUnimplemented, SecUnimplemented.message); return nil
}

// MARK: Shared web credentials (iOS password autofill)

public typealias SecSharedWebCredentialCompletion = @Sendable (CFError?) -> Void

public func SecAddSharedWebCredential(_ fqdn: CFString, _ account: CFString, _ password: CFString?,
                                      _ completionHandler: @escaping @Sendable (CFError?) -> Void) {
    completionHandler(NSError(domain: NSOSStatusErrorDomain, code: Int(errSecUnimplemented),
                              userInfo: [NSLocalizedDescriptionKey: SecUnimplemented.message]))
}

public func SecRequestSharedWebCredential(_ fqdn: CFString?, _ account: CFString?,
                                          _ completionHandler: @escaping @Sendable (CFArray?, CFError?) -> Void) {
    completionHandler(nil, NSError(domain: NSOSStatusErrorDomain, code: Int(errSecUnimplemented),
                                   userInfo: [NSLocalizedDescriptionKey: SecUnimplemented.message]))
}
