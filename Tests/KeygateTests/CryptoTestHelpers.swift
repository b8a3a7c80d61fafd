// Small helpers shared by the crypto and key-store unit tests: secrets from strings,
// throwaway folders, and asserting a KeychainError code.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

func secureBytes(_ text: String) throws -> SecureBytes {
    var bytes = Array(text.utf8)
    return try SecureBytes(consuming: &bytes)
}

func secureBytes(_ bytes: [UInt8]) throws -> SecureBytes {
    var copy = bytes
    return try SecureBytes(consuming: &copy)
}

/// A fresh empty folder under the system temporary folder, removed at teardown.
func makeTemporaryFolder(_ testCase: XCTestCase) throws -> String {
    let path = NSTemporaryDirectory() + "keygate-test-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    testCase.addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
    return path
}

/// A fresh gate folder (root's records, as KEYGATE_TEST_GATE_DIR points the gatekeeper at one),
/// set for this process and removed, with the variable, at teardown.
@discardableResult
func makeGateFolder(_ testCase: XCTestCase) throws -> String {
    let path = try makeTemporaryFolder(testCase)
    setenv("KEYGATE_TEST_GATE_DIR", path, 1)
    testCase.addTeardownBlock { unsetenv("KEYGATE_TEST_GATE_DIR") }
    return path
}

/// Runs `body`, expecting a KeychainError with `code`; returns it for further checks.
@discardableResult
func assertThrowsKeychainError<T>(_ code: KeychainError.Code, file: StaticString = #filePath, line: UInt = #line,
                                  _ body: () throws -> T) -> KeychainError? {
    do {
        _ = try body()
        XCTFail("expected \(code.name), but nothing was thrown", file: file, line: line)
    } catch let error as KeychainError {
        XCTAssertEqual(error.code, code, "message: \(error.message)", file: file, line: line)
        return error
    } catch {
        XCTFail("expected KeychainError \(code.name), got \(error)", file: file, line: line)
    }
    return nil
}
