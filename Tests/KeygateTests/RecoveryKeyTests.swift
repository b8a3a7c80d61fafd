// The recovery key's human form: readable groups, a checksum that catches typos, and
// a parser that forgives case, spacing and look-alike letters. The key stays in locked memory
// from generation to display: the display round-trips from locked bytes, and
// `RecoveryKeyMemoryCheck` fails on a String made anywhere on the key's path.
import Foundation
import KeygateTestSupport
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class RecoveryKeyTests: XCTestCase {
    private func text(_ bytes: SecureBytes) -> String { String(decoding: bytes.unprotectedCopy(), as: UTF8.self) }

    func test_generate_gives32RandomBytes() throws {
        let a = try RecoveryKey.generate(), b = try RecoveryKey.generate()
        XCTAssertEqual(a.count, 32)
        XCTAssertFalse(a.constantTimeEquals(b))
    }

    func test_format_gives14DashSeparatedGroupsOf4() throws {
        let formatted = text(try RecoveryKey.format(RecoveryKey.generate()))
        let groups = formatted.split(separator: "-", omittingEmptySubsequences: false)
        XCTAssertEqual(groups.count, 14, formatted)
        let alphabet = Set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        for group in groups {
            XCTAssertEqual(group.count, 4, formatted)
            XCTAssertTrue(group.allSatisfy { alphabet.contains($0) }, formatted)
        }
    }

    func test_parse_ofFormat_returnsTheKey() throws {
        for _ in 0..<20 {
            let key = try RecoveryKey.generate()
            XCTAssertTrue(try RecoveryKey.parse(RecoveryKey.format(key)).constantTimeEquals(key))
        }
    }

    func test_parse_toleratesCaseSpacesMissingDashesAndLookAlikes() throws {
        let key = try RecoveryKey.generate()
        let formatted = text(try RecoveryKey.format(key))
        let variants = [
            formatted.lowercased(),
            formatted.replacingOccurrences(of: "-", with: ""),
            formatted.replacingOccurrences(of: "-", with: " ") + "\n",
            "  " + formatted.replacingOccurrences(of: "0", with: "O").replacingOccurrences(of: "1", with: "l"),
            formatted.replacingOccurrences(of: "1", with: "i"),
        ]
        for variant in variants {
            XCTAssertTrue(try RecoveryKey.parse(secureBytes(variant)).constantTimeEquals(key), variant)
        }
    }

    func test_parse_failsAuth_whenOneSymbolIsMistyped() throws {
        let formatted = text(try RecoveryKey.format(RecoveryKey.generate()))
        var characters = Array(formatted)
        for index in [0, 7, 30, characters.count - 1] {
            let original = characters[index]
            characters[index] = original == "A" ? "B" : "A"
            assertThrowsKeychainError(.authFailed) { try RecoveryKey.parse(secureBytes(String(characters))) }
            characters[index] = original
        }
    }

    func test_parse_throwsParam_forWrongLengthOrForeignCharacters() throws {
        let formatted = text(try RecoveryKey.format(RecoveryKey.generate()))
        let short = assertThrowsKeychainError(.param) { try RecoveryKey.parse(secureBytes(String(formatted.dropLast()))) }
        XCTAssertTrue(short?.message.contains("this one has 55") ?? false, short?.message ?? "")
        assertThrowsKeychainError(.param) { try RecoveryKey.parse(secureBytes(formatted + "A")) }
        assertThrowsKeychainError(.param) { try RecoveryKey.parse(secureBytes("U" + formatted.dropFirst())) }
        assertThrowsKeychainError(.param) { try RecoveryKey.parse(secureBytes("")) }
    }

    /// What a person is shown (a notice with the key in it, written from locked memory to a
    /// descriptor) parses back to the key.
    func test_theShownKey_parsesBackToTheKey() throws {
        let key = try RecoveryKey.generate()
        let pipe = Pipe()
        PromptNotice.write("Recovery key:\n  ", secret: try RecoveryKey.format(key), "\nkeep it", to: pipe.fileHandleForWriting.fileDescriptor)
        try pipe.fileHandleForWriting.close()
        let shown = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = shown.split(separator: "\n")
        XCTAssertEqual(lines.count, 3, shown)
        XCTAssertEqual(lines.first, "Recovery key:")
        XCTAssertEqual(lines.last, "keep it")
        XCTAssertEqual(lines[1].count, 2 + RecoveryKey.textLength)
        XCTAssertTrue(try RecoveryKey.parse(secureBytes(String(lines[1]))).constantTimeEquals(key))
    }

    /// The key's path (generation, format, parse, init, unlock --recovery, passwd --recovery, the
    /// CLI's printing and reading) makes no String of the key: every function that names it, and
    /// the files that print it, convert no bytes to text.
    func test_noStringIsMadeOnTheRecoveryKeysPath() throws {
        let files = try PackagePaths.swiftSources()
        let scanned = RecoveryKeyMemoryCheck.scannedFunctions(in: files)
        XCTAssertGreaterThan(scanned.count, 10, "the functions that name the recovery key were found: \(scanned)")
        for function in ["Keygate/Operations/KeychainOperations.swift: func initialize", "Keygate/Operations/KeychainOperations.swift: func unlock",
                         "Keygate/Operations/KeychainOperations.swift: func resetPassword", "KeygateCLI/Commands/KeygateCommand.swift: func readRecoveryKey",
                         "Keygate/Unlocking/KeyUnlocker.swift: func showRecoveryKeyOnce", "KeygateCore/Keys/KeyStore.swift: func initialize"] {
            XCTAssertTrue(scanned.contains(function), "\(function) in \(scanned)")
        }
        XCTAssertEqual(RecoveryKeyMemoryCheck.copies(in: files), [], "keep the key in SecureBytes: write it with write(toFileDescriptor:)")
        // The check sees a copy planted where formatting the key would make it a String.
        var planted = files
        let file = "Keygate/Unlocking/KeyUnlocker.swift"
        let text = try XCTUnwrap(files[file])
        let anchor = "do { text = try RecoveryKey.format(recoveryKey) } catch { return }"
        XCTAssertTrue(text.contains(anchor), "the planted copy needs its anchor in \(file)")
        planted[file] = text.replacingOccurrences(of: anchor, with: anchor + "\n"
                                                      + "        let shown = text.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }")
        XCTAssertEqual(RecoveryKeyMemoryCheck.copies(in: planted).count, 1)
    }
}

/// Finds Strings made from bytes on the recovery key's path: in every function whose declaration
/// names the recovery key, and in the files that format, parse and print it.
enum RecoveryKeyMemoryCheck {
    static let wholeFiles = ["KeygateCore/Crypto/RecoveryKey.swift", "KeygateCLI/Commands/InitCommand.swift",
                             "KeygateCLI/Commands/UnlockCommand.swift", "KeygateCLI/Commands/PasswdCommand.swift"]
    static let copying = ["String(decoding", "String(cString", "String(bytes", "String(validating", "unprotectedCopy(",
                          ".description"]

    /// "file: func name" for each function whose declaration line names the recovery key.
    static func scannedFunctions(in files: [String: String]) -> [String] {
        bodies(in: files).map { "\($0.file): func \($0.name)" }
    }

    static func copies(in files: [String: String]) -> [String] {
        var found: [String] = []
        for file in wholeFiles {
            for line in (files[file] ?? "").split(separator: "\n") where flagged(line) { found.append("\(file): \(line)") }
        }
        for body in bodies(in: files) where !wholeFiles.contains(body.file) {
            for line in body.text.split(separator: "\n") where flagged(line) { found.append("\(body.file): \(line)") }
        }
        return found
    }

    private static func flagged(_ line: Substring) -> Bool {
        let s = line.trimmingCharacters(in: .whitespaces)
        return !s.hasPrefix("//") && copying.contains { s.contains($0) }
    }

    /// Each function whose declaration (its doc comment, and its signature up to the body)
    /// mentions "recovery", with its body (braces matched).
    private static func bodies(in files: [String: String]) -> [(file: String, name: String, text: String)] {
        var out: [(String, String, String)] = []
        for (file, text) in files.sorted(by: { $0.key < $1.key }) {
            let chars = Array(text)
            var index = 0
            var doc = ""
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                defer { index += line.count + 1 }
                let s = line.trimmingCharacters(in: .whitespaces)
                if s.hasPrefix("///") { doc += s; continue }
                defer { doc = "" }
                guard let range = s.range(of: "func "), !s.hasPrefix("//"),
                      let open = chars[index...].firstIndex(of: "{") else { continue }
                let signature = String(chars[index..<open])
                guard (doc + signature).lowercased().contains("recovery") else { continue }
                let name = String(s[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                var depth = 0
                var end = open
                for i in open..<chars.count {
                    if chars[i] == "{" { depth += 1 }
                    if chars[i] == "}" { depth -= 1 }
                    if depth == 0 { end = i; break }
                }
                out.append((file, name, String(chars[open...end])))
            }
        }
        return out
    }
}
