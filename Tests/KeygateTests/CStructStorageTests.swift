// Guards against a C struct global the optimizer shrinks. swiftc -O lowers a Swift global (or static
// stored property) of an imported C struct with inner padding to a packed constant that
// leaves the padding out: `static var x = sigaction()` got 148 bytes where C's struct has
// 152, and sigaction(2) writing into it overwrote the next global in the release binary.
// Such state belongs on the C side (Sources/CSystem/terminal.h shows how). This test reads
// every Swift source that ships and fails on a global or static stored property whose
// type or initializer is one of the C structs Keygate touches.
import Foundation
import KeygateTestSupport
import XCTest

final class CStructStorageTests: XCTestCase {
    /// The C structs (and typedefs of structs) that Keygate's sources use.
    static let cStructs = ["sigaction", "termios", "stat", "ucred", "pollfd", "winsize", "timespec", "timeval",
                           "sigset_t", "pam_conv", "pam_message", "pam_response", "passwd", "group", "rlimit",
                           "sockaddr_un", "sockaddr", "msghdr", "iovec", "utsname", "statfs", "statvfs",
                           "posix_spawn_file_actions_t", "posix_spawnattr_t", "pthread_mutex_t"]

    nonisolated(unsafe) private static let declaration: NSRegularExpression? = {
        let names = cStructs.joined(separator: "|")
        // `static var x = T()`, `static var x: T`, `var x = T()`, `let x: T` (any modifiers before).
        let pattern = #"^\s*(?:nonisolated\(unsafe\)\s+)?(?:(?:private|fileprivate|internal|public|package)\s+)?"#
            + #"(?:(?:static|class)\s+)?(?:var|let)\s+\w+\s*(?::\s*(?:\#(names))\b|=\s*(?:\#(names))\s*\()"#
        return try? NSRegularExpression(pattern: pattern)
    }()

    /// True for a line that declares a global or a static stored property of a C struct. Members of
    /// a type are indented and count only with `static`/`class`: instance storage and locals are
    /// laid out with the full type, padding included.
    static func declaresCStructGlobal(_ line: String) -> Bool {
        guard let regex = declaration,
              regex.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil else { return false }
        let isTopLevel = !line.hasPrefix(" ") && !line.hasPrefix("\t")
        return isTopLevel || line.contains("static ") || line.contains("class ")
    }

    func test_noGlobalOrStaticStoredPropertyHoldsACStruct() throws {
        XCTAssertNotNil(Self.declaration)
        var offenders: [String] = []
        var scanned = 0
        for folder in ["Sources", "Fuzz"] {
            let root = PackagePaths.root + "/" + folder
            guard let walker = FileManager.default.enumerator(atPath: root) else { continue }
            for case let relative as String in walker where relative.hasSuffix(".swift") {
                let text = try String(contentsOfFile: root + "/" + relative, encoding: .utf8)
                scanned += 1
                for (number, line) in text.components(separatedBy: "\n").enumerated() where Self.declaresCStructGlobal(line) {
                    offenders.append("\(folder)/\(relative):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertGreaterThan(scanned, 100, "the sources were not found under \(PackagePaths.root)")
        XCTAssertEqual(offenders, [], "keep C structs in C storage (Sources/CSystem/terminal.h), not in Swift globals")
    }

    /// The scan finds the declarations that broke the release binary, and leaves locals alone.
    func test_theScan_catchesTheDeclarationsThatCrashedTheReleaseBuild() {
        XCTAssertTrue(Self.declaresCStructGlobal("    nonisolated(unsafe) private static var oldINT = sigaction()"))
        XCTAssertTrue(Self.declaresCStructGlobal("    nonisolated(unsafe) private static var savedTermios = termios()"))
        XCTAssertTrue(Self.declaresCStructGlobal("nonisolated(unsafe) var saved: termios = termios()"))
        XCTAssertTrue(Self.declaresCStructGlobal("    static var info: stat"))
        XCTAssertFalse(Self.declaresCStructGlobal("        var info = stat()"))
        XCTAssertFalse(Self.declaresCStructGlobal("    var settings: termios"))
        XCTAssertFalse(Self.declaresCStructGlobal("    static let statusLine = \"x\""))
    }
}
