// The Security calls Keygate declares but refuses (keys, certificates, identities, trust,
// PKCS #12, shared web credentials), called as Apple code calls them: each must fail with
// errSecUnimplemented, never succeed silently. And SecRandomCopyBytes, which is provided.
// Pure: no keychain involved.
import Foundation
import KeygateSecurity
import XCTest

final class RefusedSurfaceTests: XCTestCase {
    func test_SecKeyCalls_returnNil_withAnErrSecUnimplementedCFError() {
        var error: Unmanaged<CFError>?
        let attributes: [String: Any] = [kSecAttrKeyType as String: "73", kSecAttrKeySizeInBits as String: 256]
        XCTAssertNil(SecKeyCreateRandomKey(attributes as CFDictionary, &error))
        let cfError = error?.takeRetainedValue()
        XCTAssertEqual(cfError.map { CFErrorGetCode($0) }, CFIndex(errSecUnimplemented))
        XCTAssertEqual(cfError.map { CFErrorGetDomain($0) as String }, NSOSStatusErrorDomain)
        var second: Unmanaged<CFError>?
        XCTAssertNil(SecKeyCreateWithData(Data([1, 2]) as CFData, [:] as CFDictionary, &second))
        XCTAssertEqual((second?.takeRetainedValue() as Error?).map { ($0 as NSError).code }, Int(errSecUnimplemented))
        XCTAssertTrue(SecCopyErrorMessageString(errSecUnimplemented, nil)?.contains("passwords only") ?? false)
    }

    func test_certificateIdentityAndPKCS12Calls_areRefused() {
        XCTAssertNil(SecCertificateCreateWithData(nil, Data([0x30, 0x82]) as CFData))
        var items: CFArray?
        XCTAssertEqual(SecPKCS12Import(Data([1]) as CFData, [kSecImportExportPassphrase as String: "pw"] as CFDictionary, &items), errSecUnimplemented)
        XCTAssertNil(items)
        XCTAssertNil(SecPolicyCreateBasicX509())
        let done = expectation(description: "completion")
        SecRequestSharedWebCredential(nil, nil) { credentials, error in
            XCTAssertNil(credentials)
            XCTAssertEqual(error.map { CFErrorGetCode($0) }, CFIndex(errSecUnimplemented))
            done.fulfill()
        }
        wait(for: [done], timeout: 5)
    }

    func test_SecRandomCopyBytes_fillsTheBuffer_withFreshBytesEachCall() {
        var a = [UInt8](repeating: 0, count: 32), b = [UInt8](repeating: 0, count: 32)
        XCTAssertEqual(SecRandomCopyBytes(kSecRandomDefault, a.count, &a), errSecSuccess)
        XCTAssertEqual(SecRandomCopyBytes(nil, b.count, &b), errSecSuccess)
        XCTAssertNotEqual(a, b, "two 256-bit draws are equal with probability 2^-256")
        XCTAssertNotEqual(a, [UInt8](repeating: 0, count: 32))
        XCTAssertEqual(SecRandomCopyBytes(nil, 0, &a), errSecSuccess)
    }
}
