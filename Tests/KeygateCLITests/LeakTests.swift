// Where a secret must not be, checked from outside on a running `keygate exec` (real
// user, real gnome-keyring, real PAM): keygate is non-dumpable (its /proc files belong
// to root) with a core limit of 0; no secret is in keygate's argv or environment, nor in
// the child's unless --env asked for it; and root's dump of keygate's memory (/proc/PID/
// maps + mem) while it waits for the child holds no copy of the secret. Controls show
// each probe can fail: the --env child's environment and memory do hold the marker, and
// a child after exec is dumpable again.
import Foundation
import Glibc
import KeygateTestSupport
import XCTest

final class LeakTests: XCTestCase {
    struct Proc {
        let pid: Int32
        var path: String { "/proc/\(pid)" }
        func read(_ name: String) -> [UInt8] { (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path + "/" + name)))) ?? [] }
        func text(_ name: String) -> String { String(decoding: read(name), as: UTF8.self) }
        func statusField(_ field: String) -> String? {
            text("status").split(separator: "\n").first { $0.hasPrefix(field + ":") }
                .map { $0.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces) }
        }
        var uid: UInt32? { statusField("Uid").flatMap { $0.split(separator: "\t").first }.flatMap { UInt32($0) } }
        var parent: Int32? { statusField("PPid").flatMap { Int32($0) } }
        var name: String { text("comm").trimmingCharacters(in: .whitespacesAndNewlines) }
        /// The owner of /proc/PID/environ: root when the process is not dumpable.
        var procOwner: UInt32? {
            var info = stat()
            return stat(path + "/environ", &info) == 0 ? info.st_uid : nil
        }

        /// Every readable mapping's bytes, read as root through /proc/PID/mem.
        func memoryContains(_ needle: [UInt8]) -> (found: Bool, bytesRead: Int) {
            let fd = open(path + "/mem", O_RDONLY)
            guard fd >= 0 else { return (false, 0) }
            defer { close(fd) }
            var total = 0
            for line in text("maps").split(separator: "\n") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count >= 2, fields[1].hasPrefix("r"), !line.hasSuffix("[vvar]"), !line.hasSuffix("[vsyscall]") else { continue }
                let range = fields[0].split(separator: "-")
                guard range.count == 2, let start = UInt64(range[0], radix: 16), let end = UInt64(range[1], radix: 16), end > start else { continue }
                var buffer = [UInt8](repeating: 0, count: Int(end - start))
                let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(Int64(bitPattern: start))) }
                guard n > 0 else { continue }
                total += n
                if LeakTests.contains(buffer[0..<n], needle) { return (true, total) }
            }
            return (false, total)
        }
    }

    static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        var i = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while i <= last {
            guard let hit = haystack[i...last].firstIndex(of: first) else { return false }
            if haystack[hit..<(hit + needle.count)].elementsEqual(needle) { return true }
            i = hit + 1
        }
        return false
    }

    static func processes() -> [Proc] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }.map(Proc.init)
    }

    func test_execParent_isNotDumpable_hasNoCores_andHoldsNoSecret_inArgvEnvironOrMemory() throws {
        let h = try CLIUserHarness()
        let marker = "KGLEAK" + (0..<4).map { _ in UUID().uuidString.replacingOccurrences(of: "-", with: "") }.joined()
        let needle = Array(marker.utf8)
        try h.writeUserFile("marker", marker, mode: 0o600)
        let group = DispatchGroup()
        nonisolated(unsafe) var result: ProcessResult?
        nonisolated(unsafe) var failure: Error?
        nonisolated(unsafe) let harness = h
        group.enter()
        DispatchQueue.global().async {
            do {
                result = try harness.run("""
                    keygate add -s leak -a a < "$HOME/marker"; echo add=$?
                    keygate exec -s leak -a a --stdin -- sleep 60 & 
                    keygate exec -s leak -a a --env LEAK_VAR -- sleep 60 &
                    wait; echo done=1
                    """)
            } catch { failure = error }
            group.leave()
        }
        // Wait for two keygate processes of the user, each with its sleep child. The children sleep
        // long enough for a loaded machine's probes, and are ended once the probes are done.
        var pairs: [(keygate: Proc, child: Proc)] = []
        func endChildren() { for (keygate, child) in pairs where child.parent == keygate.pid && child.name == "sleep" { kill(child.pid, SIGKILL) } }
        defer { endChildren(); group.wait() }
        let deadline = Date().addingTimeInterval(60)
        while pairs.count < 2, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            let all = Self.processes()
            let parents = all.filter { $0.uid == h.user.uid && $0.name == "keygate" }
            pairs = parents.compactMap { p in all.first { $0.parent == p.pid && $0.name == "sleep" }.map { (p, $0) } }
        }
        guard pairs.count == 2 else {
            endChildren()
            group.wait()
            return XCTFail("two `keygate exec` parents with their children did not appear: \(failure.map { "\($0)" } ?? result?.summary ?? "")")
        }
        let envPair = pairs.first { String(decoding: $0.child.read("environ"), as: UTF8.self).contains("LEAK_VAR=") }
        let stdinPair = pairs.first { $0.keygate.pid != envPair?.keygate.pid }
        guard let envPair, let stdinPair else { return XCTFail("one child got the secret in its environment (--env)") }

        for (keygate, child) in pairs {
            // Non-dumpable: the kernel gives its /proc files to root. Control: the child, after exec, is the user's.
            XCTAssertEqual(keygate.procOwner, 0, "keygate (pid \(keygate.pid)) is not dumpable")
            XCTAssertEqual(child.procOwner, h.user.uid, "control: the exec'd child is dumpable again")
            let core = keygate.text("limits").split(separator: "\n").first { $0.hasPrefix("Max core file size") }
            let limits = core?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2).map(String.init)
            XCTAssertEqual(limits, ["0", "0"], "RLIMIT_CORE is 0 (soft and hard): \(core ?? "none")")
            for (what, bytes) in [("keygate argv", keygate.read("cmdline")), ("keygate environ", keygate.read("environ")),
                                  ("child argv", child.read("cmdline"))] {
                XCTAssertFalse(bytes.isEmpty, "\(what) was read")
                XCTAssertFalse(Self.contains(bytes[...], needle), "the secret is in \(what)")
            }
            let dump = keygate.memoryContains(needle)
            XCTAssertGreaterThan(dump.bytesRead, 1_000_000, "keygate's memory was read")
            XCTAssertFalse(dump.found, "the secret is still in keygate's memory (pid \(keygate.pid)) while it waits")
        }
        XCTAssertFalse(Self.contains(stdinPair.child.read("environ")[...], needle), "--stdin keeps the secret out of the child's environment")
        // Controls: the same probes find the secret where --env put it.
        let childEnv = envPair.child.read("environ")
        let leakVar = childEnv.split(separator: 0).first { $0.starts(with: Array("LEAK_VAR=".utf8)) }.map { Array($0) } ?? []
        XCTAssertTrue(Self.contains(childEnv[...], needle),
                      "control: --env puts it in the child's environment (LEAK_VAR has \(leakVar.count - 9) bytes, marker \(needle.count))")
        XCTAssertTrue(envPair.child.memoryContains(needle).found, "control: the memory scan finds it in the --env child")
        endChildren()
        group.wait()
        XCTAssertNil(failure)
        XCTAssertEqual(result?.values["add"], "0", result?.summary ?? "")
    }
}
