// Comments say why, never when (docs/DECISIONS.md, "Comments say why, not when"): history lives
// in git and docs/DECISIONS.md. The check reads every comment in Sources (Swift files, and the C
// headers and sources of the shims), the `#` comments of the Makefile and scripts/, and the code of
// Tests/, bench/ and .ci/ (Swift, C, Python, shell), and fails naming any that cites an issue (the
// word issue, ticket, bug or PR, or a bare `#`, before a number) or tells what the code once did,
// by a short list of phrases that mean history and nothing else on this tree.
// `CommentScanner` finds the comments, skipping string literals (interpolations, multi-line and raw
// strings too), so a help text or a message never counts. Python's docstrings are the exception:
// a string that stands as a statement is never output by the code around it, it is the file's or
// function's header comment, so it is read as one (a usage text printed from `__doc__` included:
// an issue number tells its reader nothing either). Shell comments are the lines that start with
// `#`; one after a command on its line is not read (quotes, `$#` and here-documents would need a
// shell's parser).
import Foundation
import KeygateTestSupport
import XCTest

/// The comments of a Swift or C file, one entry for each line a comment covers.
struct CommentScanner {
    struct Line: Equatable {
        let line: Int
        let text: String
    }

    private let bytes: [UInt8]
    private let swift: Bool
    private var index = 0
    private var found: [(offset: Int, text: String)] = []

    private static let slash = UInt8(ascii: "/"), star = UInt8(ascii: "*"), quote = UInt8(ascii: "\""),
                       apostrophe = UInt8(ascii: "'"), hash = UInt8(ascii: "#"), backslash = UInt8(ascii: "\\"),
                       open = UInt8(ascii: "("), close = UInt8(ascii: ")"), newline = UInt8(ascii: "\n")

    /// Every comment line of `text`: `swift` for Swift's rules (nested block comments, interpolated
    /// and raw strings), else C's (character literals, block comments that do not nest).
    static func comments(in text: String, swift: Bool) -> [Line] {
        var scanner = CommentScanner(bytes: Array(text.utf8), swift: swift)
        scanner.code(inInterpolation: false)
        return scanner.lines()
    }

    /// Every comment line of a Python file: `#` to the end of its line outside strings, and a string
    /// that stands as a statement of its own (a docstring), which Python evaluates and drops.
    static func comments(inPython text: String) -> [Line] {
        var scanner = CommentScanner(bytes: Array(text.utf8), swift: false)
        scanner.python()
        return scanner.lines()
    }

    /// What was recorded, one entry for each line it covers.
    private func lines() -> [Line] {
        var lineStarts = [0]
        for (offset, byte) in bytes.enumerated() where byte == Self.newline { lineStarts.append(offset + 1) }
        func line(of offset: Int) -> Int {
            var low = 0, high = lineStarts.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if lineStarts[mid] <= offset { low = mid } else { high = mid - 1 }
            }
            return low + 1
        }
        var lines: [Line] = []
        for (offset, text) in found {
            for (n, part) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                lines.append(Line(line: line(of: offset) + n, text: String(part)))
            }
        }
        return lines
    }

    private init(bytes: [UInt8], swift: Bool) {
        self.bytes = bytes
        self.swift = swift
    }

    private func peek(_ ahead: Int) -> UInt8? {
        index + ahead < bytes.count ? bytes[index + ahead] : nil
    }

    /// Code up to the end, or (in an interpolation) up to its closing parenthesis.
    private mutating func code(inInterpolation: Bool) {
        var depth = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Self.slash, peek(1) == Self.slash {
                let start = index
                while index < bytes.count, bytes[index] != Self.newline { index += 1 }
                record(start, index)
            } else if byte == Self.slash, peek(1) == Self.star {
                blockComment()
            } else if byte == Self.quote {
                string(raw: 0)
            } else if swift, byte == Self.hash {
                var n = 0
                while peek(n) == Self.hash { n += 1 }
                index += n
                if peek(0) == Self.quote { string(raw: n) }
            } else if !swift, byte == Self.apostrophe {
                index += 1
                while index < bytes.count, bytes[index] != Self.apostrophe, bytes[index] != Self.newline {
                    index += bytes[index] == Self.backslash ? 2 : 1
                }
                index += 1
            } else if inInterpolation, byte == Self.open {
                depth += 1
                index += 1
            } else if inInterpolation, byte == Self.close {
                index += 1
                if depth == 0 { return }
                depth -= 1
            } else {
                index += 1
            }
        }
    }

    /// A block comment from its `/*`: Swift's nest, C's end at the first `*/`.
    private mutating func blockComment() {
        let start = index
        var depth = 0
        while index < bytes.count {
            if bytes[index] == Self.slash, peek(1) == Self.star {
                depth += 1
                index += 2
            } else if bytes[index] == Self.star, peek(1) == Self.slash {
                index += 2
                depth -= 1
                if depth == 0 || !swift { break }
            } else {
                index += 1
            }
        }
        record(start, index)
    }

    /// A string literal from its opening quote, `raw` the number of `#` before it.
    private mutating func string(raw: Int) {
        let multiLine = peek(1) == Self.quote && peek(2) == Self.quote
        index += multiLine ? 3 : 1
        func hashes(from ahead: Int) -> Int {
            var n = 0
            while n < raw, peek(ahead + n) == Self.hash { n += 1 }
            return n
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Self.backslash, hashes(from: 1) == raw {
                if swift, peek(1 + raw) == Self.open {
                    index += 2 + raw
                    code(inInterpolation: true)
                } else {
                    index += 2 + raw
                }
            } else if byte == Self.quote, !multiLine || (peek(1) == Self.quote && peek(2) == Self.quote) {
                let length = multiLine ? 3 : 1
                if hashes(from: length) == raw {
                    index += length + raw
                    return
                }
                index += 1
            } else if byte == Self.newline, !multiLine {
                return
            } else {
                index += 1
            }
        }
    }

    /// Python, from the start: a `#` outside a string runs to the end of its line; a string (any
    /// prefix, `\` escaping the next byte even in a raw string, as Python ends it) is recorded when
    /// it is the first token of a logical line, one that no open bracket or `\` carries over.
    private mutating func python() {
        var depth = 0, statementStart = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Self.hash {
                let start = index
                while index < bytes.count, bytes[index] != Self.newline { index += 1 }
                record(start, index)
                continue
            }
            if byte == Self.newline {
                if depth == 0 { statementStart = true }
                index += 1
                continue
            }
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") {
                index += 1
                continue
            }
            if byte == Self.backslash, peek(1) == Self.newline {
                index += 2
                continue
            }
            let start = index
            var word = 0
            while let next = peek(word), Self.identifier(next) { word += 1 }
            if word <= 2, let next = peek(word), next == Self.quote || next == Self.apostrophe,
               bytes[index..<index + word].allSatisfy({ "rRbBfFuU".utf8.contains($0) }) {
                index += word
                pythonString()
                if statementStart { record(start, index) }
            } else if word > 0 {
                index += word
            } else {
                if byte == Self.open || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") { depth += 1 }
                if byte == Self.close || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") { depth = max(0, depth - 1) }
                index += 1
            }
            statementStart = false
        }
    }

    /// A Python string from its opening quote: single or triple, a `\` skipping the byte after it.
    private mutating func pythonString() {
        let quote = bytes[index]
        let triple = peek(1) == quote && peek(2) == quote
        index += triple ? 3 : 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Self.backslash {
                index += 2
            } else if byte == quote, !triple || (peek(1) == quote && peek(2) == quote) {
                index += triple ? 3 : 1
                return
            } else if byte == Self.newline, !triple {
                return
            } else {
                index += 1
            }
        }
    }

    private static func identifier(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "_") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || ((byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")) || byte >= 0x80
    }

    private mutating func record(_ start: Int, _ end: Int) {
        let text = String(decoding: bytes[start..<min(end, bytes.count)], as: UTF8.self)
        found.append((start, text))
    }
}

enum CommentRule {
    /// What a comment may not say, each with the words a finding gives. Matched without case.
    static let rules: [(name: String, pattern: String)] = [
        ("names an issue", #"\b(issues?|tickets?|bugs?|PR|pull requests?)\s*(#|no\.\s*)?[0-9]+"#),
        ("names an issue", #"(?<![\w&#/$])(?<!PKCS )#[0-9]+\b"#),
        ("tells history", #"\bused to (be|do|have|take|run|read|call|live|go|ask|make|keep|hold|say|write|open|start|fail|work|become|leave)\b"#),
        ("tells history", #"\b(before|after|since|until) this (commit|patch|fix|rewrite|refactor(ing)?)\b"#),
        ("tells history", #"\b(before|since|until) this change\b"#),
        ("tells history", #"\bno longer (needed|necessary|used|required)\b"#),
        ("tells history", #"\b(an|the) earlier (gatekeeper|version|release|commit|implementation|design|code)\b"#),
        ("tells history", #"\b(previously|formerly|in the past)\b"#),
        ("tells history", #"\b(the|its) (previous|old) (code|implementation|behaviou?r|design|approach)\b"#),
        ("tells history", #"\bas before\s*[:.,;)]"#),
        ("tells history", #"\bhonou?red before\b"#),
        ("tells history", #"\bwhat (it|they) always (was|were|did)\b"#),
        ("tells history", #"\bas (it|they) did when\b"#),
        ("tells history", #"\bas \w+ did before\b"#),
    ]

    static let compiled: [(name: String, regex: NSRegularExpression)] = rules.compactMap { rule in
        (try? NSRegularExpression(pattern: rule.pattern, options: [.caseInsensitive])).map { (rule.name, $0) }
    }

    /// All of them at once: a comment line that matches none (nearly every one) is matched once.
    static let any = try? NSRegularExpression(pattern: rules.map { "(?:\($0.pattern))" }.joined(separator: "|"),
                                              options: [.caseInsensitive])

    /// Every comment line that breaks a rule, as "path:line: rule: text". `files` maps a path to its
    /// text; a path ending in .swift is read with Swift's rules, .h and .c with C's, .py or a file
    /// whose `#!` line names python with Python's, any other as a Makefile or shell script (a line
    /// whose first non-blank is `#`, the `#!` line aside).
    static func violations(in files: [String: String]) -> [String] {
        var scanned = 0
        return violations(in: files, scanned: &scanned)
    }

    /// The same, counting the comment lines read into `scanned`.
    static func violations(in files: [String: String], scanned: inout Int) -> [String] {
        var found: [String] = []
        for (path, text) in files.sorted(by: { $0.key < $1.key }) {
            let lines = comments(of: path, text)
            scanned += lines.count
            for comment in lines {
                let line = comment.text.trimmingCharacters(in: .whitespaces)
                let range = NSRange(location: 0, length: (line as NSString).length)
                guard any?.firstMatch(in: line, range: range) != nil else { continue }
                for rule in compiled where rule.regex.firstMatch(in: line, range: range) != nil {
                    found.append("\(path):\(comment.line): \(rule.name): \(line)")
                    break
                }
            }
        }
        return found
    }

    static func comments(of path: String, _ text: String) -> [CommentScanner.Line] {
        if path.hasSuffix(".swift") { return CommentScanner.comments(in: text, swift: true) }
        if path.hasSuffix(".h") || path.hasSuffix(".c") { return CommentScanner.comments(in: text, swift: false) }
        if python(path, text) { return CommentScanner.comments(inPython: text) }
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { n, line in
            let s = line.trimmingCharacters(in: .whitespaces)
            return s.hasPrefix("#") && !s.hasPrefix("#!") ? CommentScanner.Line(line: n + 1, text: s) : nil
        }
    }

    /// Whether a file is Python: by its name, or by the interpreter its `#!` line names.
    static func python(_ path: String, _ text: String) -> Bool {
        if path.hasSuffix(".py") { return true }
        let first = text.prefix { $0 != "\n" }
        return first.hasPrefix("#!") && first.contains("python")
    }

    /// Sources' Swift files and C shims, by path below the package root.
    static func sources() throws -> [String: String] {
        var files: [String: String] = [:]
        for (path, text) in try PackagePaths.swiftSources() { files["Sources/" + path] = text }
        let base = PackagePaths.root + "/Sources"
        for case let file as String in FileManager.default.enumerator(atPath: base) ?? NSEnumerator()
        where file.hasSuffix(".h") || file.hasSuffix(".c") {
            files["Sources/" + file] = try String(contentsOfFile: base + "/" + file, encoding: .utf8)
        }
        return files
    }

    /// The Makefile and every text file under scripts/, by path below the package root.
    static func buildFiles() throws -> [String: String] {
        var files = ["Makefile": try String(contentsOfFile: PackagePaths.root + "/Makefile", encoding: .utf8)]
        for case let file as String in FileManager.default.enumerator(atPath: PackagePaths.scripts) ?? NSEnumerator() {
            var isFolder: ObjCBool = false
            let path = PackagePaths.scripts + "/" + file
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
                  let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }   // try?: a binary file holds no comments
            files["scripts/" + file] = text
        }
        return files
    }

    /// The code of Tests/, bench/ and .ci/ (Swift, C, Python and shell: by name, or for a name
    /// without an extension by its `#!` line), by path below the package root. Left out are
    /// the files that are data, not code: the policies, keychains and JSON that tests read as
    /// fixtures, the bench's saved profiles and results, and Markdown.
    static func testAndBenchFiles() throws -> [String: String] {
        var files: [String: String] = [:]
        for folder in ["Tests", "bench", ".ci"] {
            let base = PackagePaths.root + "/" + folder
            for case let file as String in FileManager.default.enumerator(atPath: base) ?? NSEnumerator()
            where !file.split(separator: "/").contains(".build") {
                var isFolder: ObjCBool = false
                let path = base + "/" + file
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue else { continue }
                let name = file.split(separator: "/").last.map(String.init) ?? file
                if [".swift", ".c", ".h", ".sh", ".py"].contains(where: { name.hasSuffix($0) }) {
                    files[folder + "/" + file] = try String(contentsOfFile: path, encoding: .utf8)
                } else if !name.contains("."), let text = try? String(contentsOfFile: path, encoding: .utf8),   // try?: a binary fixture is no script
                          text.hasPrefix("#!") {
                    files[folder + "/" + file] = text
                }
            }
        }
        return files
    }
}

final class CommentRuleTests: XCTestCase {
    func test_noCommentInSources_namesAnIssueOrTellsHistory() throws {
        let files = try CommentRule.sources()
        XCTAssertNotNil(files["Sources/CSystem/terminal.h"], "the C headers were read")
        XCTAssertNotNil(files["Sources/KeygateCore/System/SafeFile.swift"], "the Swift files were read")
        XCTAssertEqual(CommentRule.compiled.count, CommentRule.rules.count, "every rule compiled")
        XCTAssertNotNil(CommentRule.any, "the rules compiled together")
        var scanned = 0
        XCTAssertEqual(CommentRule.violations(in: files, scanned: &scanned), [])
        XCTAssertGreaterThan(scanned, 4_000, "the scanner found the comments")
    }

    func test_noCommentInTheMakefileOrScripts_namesAnIssueOrTellsHistory() throws {
        let files = try CommentRule.buildFiles()
        XCTAssertGreaterThan(files.count, 5, "the Makefile and the scripts were read")
        XCTAssertEqual(CommentRule.violations(in: files), [])
    }

    func test_noCommentInTestsTheBenchOrCI_namesAnIssueOrTellsHistory() throws {
        let files = try CommentRule.testAndBenchFiles()
        for path in ["Tests/KeygateTests/CommentRuleTests.swift", "Tests/PAMDriver/pam-driver.c",
                     "Tests/PAMDriver/with-log-socket.sh", "bench/run", "bench/lib/report.py", "bench/lib/user-steps.sh",
                     "bench/tools/daemon-abuse", "bench/tools/foundation-cost.swift", "bench/tools/spawn-timer.c",
                     "bench/c-floor/lookup-loop.c", "bench/library-read/Sources/library-read/main.swift", ".ci/run"] {
            XCTAssertNotNil(files[path], "\(path) was read")
        }
        XCTAssertNil(files["bench/profiles/README.md"], "Markdown is documentation, not code")
        XCTAssertNil(files["Tests/KeygateTests/PolicyCorpus/01-vpn.policy"], "a fixture is data")
        var scanned = 0
        XCTAssertEqual(CommentRule.violations(in: files, scanned: &scanned), [])
        XCTAssertGreaterThan(scanned, 3_000, "the scanner found the comments")
    }

    /// A planted issue number or history line is caught, in every kind of comment and file, on its
    /// own line; the same words in a string literal, and look-alikes, are not.
    func test_aPlantedViolationIsCaught_andAStringIsNot() throws {
        let files = try CommentRule.sources()
        let victim = "Sources/KeygateCore/Items/ItemIdentity.swift"
        let original = try XCTUnwrap(files[victim], "the planted file exists")
        let originalLines = original.split(separator: "\n", omittingEmptySubsequences: false).count
        // The rest of the tree is the test above's: the plants are checked in their file alone.
        for planted in ["// Kept for the read path (issue 19).", "/// See Issue 7, item 2.", "let x = 1 // as asked in #42",
                        "/* ticket 12 */", "// The gatekeeper used to run PAM here.", "// Before this change it wrote twice.",
                        "/// An earlier gatekeeper made it with its caller's group.", "// This check is no longer needed.",
                        "/* outer /* nested */ previously it read twice */", "// The frame is what it always was.",
                        "// A hook honoured before the value.", "// It works as before.",
                        "// Behave as Keygate did before it completed prompts.", "// The separate runs used to leave it."] {
            let found = CommentRule.violations(in: [victim: original + "\n" + planted + "\n"])
            XCTAssertEqual(found.count, 1, "\(planted): \(found)")
            XCTAssertTrue(found.first?.hasPrefix("\(victim):\(originalLines + 1): ") == true, "\(planted): \(found)")
        }
        // A block comment's later line is reported on its own line.
        let block = [victim: "/* What it does,\n   and why.\n   It was slower before this commit. */\n" + original]
        XCTAssertEqual(CommentRule.violations(in: block).map { $0.components(separatedBy: ": ").first ?? "" }, ["\(victim):3"])
        // Strings, and words that only look like a reference, are no violation.
        let quiet = [victim: original + #"""

            let a = "see issue 19 // used to be"
            let b = """
                // issue 13, as before.
                """
            let c = #"// issue 4 "# + "#5"
            let d = "\(a.isEmpty ? "// issue 6" : b) // issue 7"
            // Issue a handle; PKCS #12 and PKCS#7; the shell's $#; issued 19 times; used to undo a write.
            let e = "/* previously */"
            /* A handle is issued per call. The older gatekeeper's files still read. */
            """#]
        XCTAssertEqual(CommentRule.violations(in: quiet), [])
        // The C shims: a comment is caught, a string and a character literal are not.
        let header = "Sources/CSystem/terminal.h"
        let c = [header: (files[header] ?? "") + "\nstatic const char *m = \"issue 13\"; char q = '\"'; /* the fd (issue 13) */\n// #7\n"]
        XCTAssertEqual(CommentRule.violations(in: c).count, 2, "\(CommentRule.violations(in: c))")
        // The Makefile's and the scripts' `#` comments.
        XCTAssertEqual(CommentRule.violations(in: ["Makefile": "#!/usr/bin/make\n# The long runs of issue 8.\nall:\n\t# fine\n"]),
                       ["Makefile:2: names an issue: # The long runs of issue 8."])
    }

    /// Python: a `#` comment, on its own line or after code, and a docstring are read; a `#` or the
    /// same words in a string (quoted, triple-quoted, prefixed, continued by a bracket or `\`) are not.
    func test_python_commentsAndDocstringsAreRead_stringsAreNot() {
        let script = #"""
            #!/usr/bin/env python3
            """tool: the figures of issue 3."""
            import sys
            # The long runs of issue 8.
            x = 1  # as asked in #42
            print("# issue 5", '#6', rb'#7\'', f"{x}#8")
            text = """
            # issue 9, as before.
            """
            y = (
                "issue 10"
                '''# issue 11'''
            )
            z = \
                "issue 12"
            def f():
                """Reads what
                issue 13 asked."""
                return "\"# issue 14"
            """#
        for path in ["bench/lib/tool.py", "bench/tools/tool"] {
            let found = CommentRule.violations(in: [path: script])
            XCTAssertEqual(found.map { $0.components(separatedBy: ": ").first ?? "" },
                           ["2", "4", "5", "18"].map { "\(path):\($0)" }, "\(found)")
        }
    }
}
