// The sealed host key's file format (SealedHostKeyFile), pure: no TPM. A written
// file parses back to the same value; a file cut short at any length, padded, with a
// foreign magic, a version from the future, an unknown parent template, a bad TCTI
// or a TPM object whose inner size disagrees is refused as errSecDecode with a next
// step, and a future version says to upgrade rather than to rotate.
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class SealedHostKeyFileTests: XCTestCase {
    private let path = "/var/lib/keygate/host.key.tpm"

    private func sample() -> SealedHostKeyFile {
        // TPM2Bs: a 2-byte big-endian size, then that many bytes.
        let publicArea: [UInt8] = [0x00, 0x04, 0x00, 0x08, 0x00, 0x0B]
        let privateArea: [UInt8] = [0x00, 0x03, 0xAA, 0xBB, 0xCC]
        return SealedHostKeyFile(tcti: "swtpm:host=127.0.0.1,port=2321", template: TPMSealing.eccP256StorageRootTemplate,
                                 object: SealedTPMObject(publicArea: publicArea, privateArea: privateArea))
    }

    private func assertRefused(_ bytes: [UInt8], containing text: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try SealedHostKeyFile.decode(bytes, path: path), file: file, line: line) { error in
            let e = error as? KeychainError
            XCTAssertEqual(e?.code, .decode, "\(error)", file: file, line: line)
            XCTAssertTrue(e?.message.contains(path) ?? false, "names the file: \(error)", file: file, line: line)
            XCTAssertTrue(e?.message.contains(text) ?? false, "\(error)", file: file, line: line)
        }
    }

    func test_encodedFile_decodesToTheSameValue_withTheDocumentedHeader() throws {
        let bytes = sample().encoded()
        XCTAssertEqual(Array(bytes[0..<6]), Array("KGTP".utf8) + [1, 1])
        XCTAssertEqual(Int(bytes[6]), "swtpm:host=127.0.0.1,port=2321".utf8.count)
        XCTAssertEqual(try SealedHostKeyFile.decode(bytes, path: path), sample())
    }

    func test_decode_refusesAFileTruncatedAtAnyLength() {
        let bytes = sample().encoded()
        for length in 0..<bytes.count {
            assertRefused(Array(bytes[0..<length]), containing: "setup-host --tpm --rotate")
        }
    }

    func test_decode_refusesTrailingBytes() {
        assertRefused(sample().encoded() + [0], containing: "unexpected bytes at the end")
    }

    func test_decode_refusesAFutureVersion_sayingUpgradeAndKeepTheFile() {
        var bytes = sample().encoded()
        bytes[4] = 2
        assertRefused(bytes, containing: "format 2, newer than this keygate understands")
        assertRefused(bytes, containing: "upgrade keygate; do not remove the file")
    }

    func test_decode_refusesVersionZero_foreignMagic_unknownTemplate() {
        var zero = sample().encoded()
        zero[4] = 0
        assertRefused(zero, containing: "format version is 0")
        var foreign = sample().encoded()
        foreign[0] = UInt8(ascii: "X")
        assertRefused(foreign, containing: "does not start like a Keygate sealed host key")
        var template = sample().encoded()
        template[5] = 9
        assertRefused(template, containing: "parent template 9")
    }

    func test_decode_refusesAnInconsistentTPM2BSize_andABadTCTI() {
        var inconsistent = sample()
        inconsistent.object.publicArea[1] = 0x05
        assertRefused(inconsistent.encoded(), containing: "inconsistent size")
        var spaced = sample()
        spaced.tcti = "swtpm host"
        assertRefused(spaced.encoded(), containing: "TCTI is not a valid configuration")
    }

    func test_decode_refusesAnOversizeFile() {
        assertRefused(sample().encoded() + [UInt8](repeating: 0, count: SealedHostKeyFile.maxBytes), containing: "does not start like")
    }

    func test_tcti_validation_acceptsNamedConfigurations_andFindsTheDevice() throws {
        XCTAssertEqual(try TPMTCTI("device:/dev/tpmrm0").devicePath, "/dev/tpmrm0")
        XCTAssertNil(try TPMTCTI("swtpm:host=127.0.0.1,port=2321").devicePath)
        XCTAssertThrowsError(try TPMTCTI(""))
        XCTAssertThrowsError(try TPMTCTI(":/dev/tpm0"))
        XCTAssertThrowsError(try TPMTCTI("device:/dev/tpm rm0"))
    }
}
