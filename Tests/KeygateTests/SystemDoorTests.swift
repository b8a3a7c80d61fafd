// One door for system calls (docs/ARCHITECTURE.md, "One door for processes, pipes and system
// calls"): raw libc is reached from KeygateCore/System and, outside it, only from the files
// named here, each with the reason it is a door of its own (the adapter for a C library or a
// kernel interface). A module opens libc when it is Glibc itself or
// CSystem (whose module map exports the libc headers it includes); Foundation re-exports Glibc
// on Linux, so its importers are named on a list of their own. A file that starts importing
// one of them fails here, and so does a named file that stopped: the lists only shrink.
import Foundation
import KeygateTestSupport
import XCTest

enum SystemDoor {
    /// The modules through which a Swift file reaches raw libc calls.
    static let libcModules: Set<String> = ["Glibc", "CSystem"]
    /// Foundation's modules, which re-export Glibc on Linux.
    static let foundationModules: Set<String> = ["Foundation", "FoundationEssentials", "FoundationNetworking"]

    /// Files outside `*/System/` that may import Glibc or CSystem (paths under Sources/), and why.
    /// Each is a door of its own; every other file reaches libc through System/.
    static let libcAllowList: [String: String] = [
        // Doors of their own: each is the adapter for a C library or a kernel interface.
        "KeygateCore/KeyringCache/KernelKeyring.swift": "the keyutils adapter: keyctl's errno values (ENOKEY, EKEYEXPIRED, EKEYREVOKED, EDQUOT)",
        "KeygateCore/Keys/TPM/TSS2Functions.swift": "the tpm2-tss loader: dlopen, dlsym and dlerror of libtss2-esys",
        "KeygateAuthentication/PAMConversation.swift": "Linux-PAM's conversation callback: the replies are calloc'd and freed as libpam requires",
        "KeygateAuthentication/TerminalEchoGuard.swift": "the terminal echo guard: sigaction, poll and read on the tty with CSystem/terminal.h's saved termios",
        "KeygateStorage/BusMessage.swift": "the sd-bus message adapter: sd-bus answers negative errno values",
        "KeygateStorage/SecretServiceConnection.swift": "the sd-bus connection adapter: negative errno values from sd-bus",
        "KeygateStorage/SecretServicePrompt.swift": "sd-bus's prompt signal match and wait",
        "KeygateSystemBus/SystemBusCall.swift": "the system bus's sd-bus adapter: negative errno values, the reply handler's wait",
        "KeygateGatekeeper/GatekeeperMain.swift": "the setuid program's start: clearenv and setenv, umask, signals, alarm; the daemon's process name and locked memory",
        "KeygateGatekeeper/TestSystemBus.swift": "test-hook builds only: a mount namespace (unshare, mount, symlink) for a private system bus",
    ]

    /// Files outside `*/System/` that may import Foundation (which re-exports Glibc), and why.
    /// They use Foundation's types; a raw libc call in one of them belongs in System/ all the same.
    static let foundationAllowList: [String: String] = [
        "Keygate/API/Keychain.swift": "the public API takes and returns Data",
        "Keygate/API/Keychain+Async.swift": "the public API takes and returns Data",
        "KeygateSecurity/KeygateSecurity.swift": "Apple's surface re-exports Foundation, as Apple's headers do",
        "KeygateSecurity/SecAccessGroups.swift": "Apple's surface: Foundation types in kSec dictionaries",
        "KeygateSecurity/CFInteriorPointers.swift": "Apple's surface: CF types over Foundation's, wiped with explicit_bzero before free",
    ]

    /// Whether `path` (under Sources/) is in a folder named System: the door itself.
    static func isInSystemFolder(_ path: String) -> Bool {
        path.split(separator: "/").dropLast().contains("System")
    }

    /// Every breach of one list, in words: a file outside System/ importing one of `modules`
    /// without being named, and a named file that imports none of them any more.
    /// `sources` maps paths under Sources/ to their text.
    static func violations(sources: [String: String], modules: Set<String>, allowed: [String: String],
                           listName: String) -> [String] {
        var found: [String] = []
        let names = modules.sorted().joined(separator: " or ")
        var importing: Set<String> = []
        for (path, text) in sources where !isInSystemFolder(path) {
            let opened = LayerCheck.imports(in: text).intersection(modules)
            guard !opened.isEmpty else { continue }
            importing.insert(path)
            if allowed[path] == nil {
                found.append("\(path) imports \(opened.sorted().joined(separator: " and ")) outside System/: call a wrapper in "
                             + "KeygateCore/System (add one: one call family per file), or name the file in SystemDoor.\(listName) "
                             + "with the reason it is a door of its own")
            }
        }
        for path in allowed.keys.sorted() where !importing.contains(path) {
            found.append("\(path) is named in SystemDoor.\(listName) but no longer imports \(names): take it off the list")
        }
        return found.sorted()
    }

    /// The text of every Swift file under Sources/, by path under Sources/.
    static func readSources() throws -> [String: String] { try PackagePaths.swiftSources() }
}

final class SystemDoorTests: XCTestCase {
    func test_noFileOutsideSystemImportsGlibcOrCSystem_unlessNamed() throws {
        let sources = try SystemDoor.readSources()
        XCTAssertGreaterThan(sources.count, 100, "the sources were read")
        // The scanner sees the door itself: System/ imports Glibc.
        XCTAssertTrue(LayerCheck.imports(in: sources["KeygateCore/System/SafeFile.swift"] ?? "").contains("Glibc"))
        XCTAssertEqual(SystemDoor.violations(sources: sources, modules: SystemDoor.libcModules,
                                             allowed: SystemDoor.libcAllowList, listName: "libcAllowList"), [])
    }

    func test_noFileOutsideSystemImportsFoundation_unlessNamed() throws {
        let sources = try SystemDoor.readSources()
        XCTAssertEqual(SystemDoor.violations(sources: sources, modules: SystemDoor.foundationModules,
                                             allowed: SystemDoor.foundationAllowList, listName: "foundationAllowList"), [])
    }

    func test_theListsAreShortAndEachEntrySaysWhy() {
        XCTAssertLessThan(SystemDoor.libcAllowList.count, 25, "the list of files with their own system calls stays short")
        for (path, reason) in SystemDoor.libcAllowList.merging(SystemDoor.foundationAllowList, uniquingKeysWith: { $0 + $1 }) {
            XCTAssertFalse(reason.trimmingCharacters(in: .whitespaces).isEmpty, "\(path) is named without a reason")
            XCTAssertFalse(SystemDoor.isInSystemFolder(path), "\(path) is in System/, which needs no entry")
        }
    }

    /// The scanner catches an import however it is written, anywhere but System/, and catches a
    /// named file that stopped importing.
    func test_aPlantedImportIsCaught_andAStaleEntryToo() throws {
        let sources = try SystemDoor.readSources()
        func check(_ planted: [String: String]) -> [String] {
            SystemDoor.violations(sources: planted, modules: SystemDoor.libcModules, allowed: SystemDoor.libcAllowList,
                                  listName: "libcAllowList")
        }
        let victim = "KeygateCore/Items/ItemIdentity.swift"
        let original = try XCTUnwrap(sources[victim], "the planted file exists")
        for line in ["import Glibc", "internal import Glibc", "package import Glibc", "public import Glibc",
                     "@preconcurrency import Glibc", "@preconcurrency internal import Glibc", "  import Glibc",
                     "import func Glibc.getuid", "internal import CSystem"] {
            var planted = sources
            planted[victim] = line + "\n" + original
            let found = check(planted)
            XCTAssertEqual(found.count, 1, "\(line): \(found)")
            XCTAssertTrue(found.first?.hasPrefix("\(victim) imports ") == true, "\(line): \(found)")
        }
        // A comment or a string is no import.
        var quiet = sources
        quiet[victim] = "// import Glibc\nlet text = \"import Glibc\"\n" + original
        XCTAssertEqual(check(quiet), [])
        // System/ is the door: a new wrapper there needs no entry.
        quiet["KeygateCore/System/NewWrapper.swift"] = "internal import Glibc\n"
        XCTAssertEqual(check(quiet), [])
        // A named file that no longer imports Glibc must leave the list.
        let named = "KeygateCore/KeyringCache/KernelKeyring.swift"
        var stale = sources
        stale[named] = (sources[named] ?? "").replacingOccurrences(of: "internal import Glibc", with: "")
        XCTAssertEqual(check(stale), ["\(named) is named in SystemDoor.libcAllowList but no longer imports CSystem or Glibc: take it off the list"])
        // Foundation is caught on its own list.
        var viaFoundation = sources
        viaFoundation[victim] = "import Foundation\n" + original
        let found = SystemDoor.violations(sources: viaFoundation, modules: SystemDoor.foundationModules,
                                          allowed: SystemDoor.foundationAllowList, listName: "foundationAllowList")
        XCTAssertEqual(found.count, 1, "\(found)")
        XCTAssertTrue(found.first?.hasPrefix("\(victim) imports Foundation outside System/") == true, "\(found)")
    }

    /// Ids change in one place: setresuid, setresgid and setgroups are called from
    /// KeygateIdentity/System/UserIdentity.swift alone (becomeRootInFull for the setuid gatekeeper,
    /// whose daemon inherits them; run(name:) to act as a user and back), through CSystem's shim.
    func test_idsChangeInOnePlace() throws {
        let pattern = try NSRegularExpression(pattern: #"(?<![.\w])(keygate_)?(setresuid|setresgid|setgroups|setuid|setgid|seteuid|setegid|setreuid|setregid)\("#)
        var callers: Set<String> = []
        for (file, text) in try SystemDoor.readSources() {
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                let s = String(line)
                if pattern.firstMatch(in: s, range: NSRange(location: 0, length: (s as NSString).length)) != nil { callers.insert(file) }
            }
        }
        XCTAssertEqual(callers, ["KeygateIdentity/System/UserIdentity.swift"])
    }

    /// The C shims (Sources/C*/, the PAM module's and the gatekeeper's start too) make every
    /// descriptor close-on-exec from the start, as the Swift door does: pipe2, accept4, socket with
    /// SOCK_CLOEXEC, open with O_CLOEXEC. A pipe() then fcntl(FD_CLOEXEC) leaves a window in which
    /// another thread's spawn inherits the descriptor. `exempt`: lines that open a descriptor for
    /// 0-2 on purpose (dup2'd there, then closed), each with why.
    static let cExempt: [String: String] = [
        "CGatekeeperStart/start.c: int null = open(\"/dev/null\", O_RDWR);": "fills a closed 0-2 before main, then closes itself",
        "CPAMModule/shim.h: int null = open(\"/dev/null\", O_WRONLY);": "the helper's standard error, between fork and exec",
    ]

    static func cViolations(_ files: [String: String]) -> [String] {
        let rules: [(String, (String) -> Bool)] = [
            (#"(?<![\w])pipe\s*\("#, { _ in true }),
            (#"(?<![\w])accept\s*\("#, { _ in true }),
            (#"(?<![\w])dup\s*\("#, { _ in true }),
            (#"(?<![\w])socket\s*\("#, { !$0.contains("SOCK_CLOEXEC") }),
            (#"(?<![\w.>])open\s*\("#, { !$0.contains("O_CLOEXEC") }),
        ]
        var found: [String] = []
        for (file, text) in files.sorted(by: { $0.key < $1.key }) {
            // Block comments out (a comment may name the calls it warns about), line by line kept.
            let code = text.replacingOccurrences(of: #"/\*[\s\S]*?\*/"#, with: "", options: .regularExpression)
            for line in code.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.hasPrefix("//") {
                for (pattern, breaks) in rules where line.range(of: pattern, options: .regularExpression) != nil && breaks(line) {
                    if cExempt[file + ": " + line] == nil { found.append(file + ": " + line) }
                }
            }
        }
        return found
    }

    func test_theCShims_makeEveryDescriptorCloseOnExec() throws {
        var files: [String: String] = [:]
        let base = PackagePaths.root + "/Sources"
        for case let file as String in FileManager.default.enumerator(atPath: base) ?? NSEnumerator()
        where file.hasSuffix(".h") || file.hasSuffix(".c") {
            files[file] = try String(contentsOfFile: base + "/" + file, encoding: .utf8)
        }
        XCTAssertNotNil(files["CSystem/terminal.h"], "the shims were read")
        XCTAssertEqual(Self.cViolations(files), [])
        // The rule sees the form terminal.h had, and leaves a close-on-exec call alone.
        XCTAssertEqual(Self.cViolations(["x.h": "    if (pipe(t->wake) != 0) return -1;\n    return pipe2(fds, O_CLOEXEC);\n"]),
                       ["x.h: if (pipe(t->wake) != 0) return -1;"])
        XCTAssertEqual(Self.cViolations(["x.c": "int fd = open(path, O_RDONLY);\nint ok = open(path, O_RDONLY | O_CLOEXEC);\n"]),
                       ["x.c: int fd = open(path, O_RDONLY);"])
    }
}
