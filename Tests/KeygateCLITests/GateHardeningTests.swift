// keygate-gatekeeper started the way a hostile user would start a setuid program:
// a descriptor above 1023, tiny resource limits, signals ignored and blocked, and the Swift
// runtime's own variables (SWIFT_DEBUG_HELP, SWIFT_DETERMINISTIC_HASHING) in its environment.
// While it waits for its request, root reads what it kept from /proc: its ids, descriptors,
// limits and signal state. Then the user tries to kill it. docs/GATEKEEPER.md, "At start,
// against sudo". Runs on the debug build's gatekeeper and, in make check's release pass, on
// the installed one; the runtime's variables are the installed (statically linked) build's
// matter, since a dynamically linked runtime starts before any code of the program.
import Foundation
import KeygateTestSupport
import XCTest

final class GateHardeningTests: XCTestCase {
    /// Starts the gatekeeper as the user with a hostile start, prints its pid, waits for a line on
    /// stdin, then closes the gatekeeper's input and prints its exit status.
    private let launcher = #"""
        import os, resource, signal, sys
        request_read, request_write = os.pipe()
        errors = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        pid = os.fork()
        if pid == 0:
            os.dup2(request_read, 0)
            os.dup2(errors, 2)
            os.close(request_write)
            resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
            os.dup2(os.open("/etc/hostname", os.O_RDONLY), 1500)   # a descriptor above 1023
            os.set_inheritable(1500, True)
            resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            resource.setrlimit(resource.RLIMIT_STACK, (256 * 1024, 256 * 1024))
            for sig in (signal.SIGTERM, signal.SIGUSR1, signal.SIGALRM):
                signal.signal(sig, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP, signal.SIGCHLD, signal.SIGALRM})
            env = {"PATH": "/usr/bin:/bin", "SWIFT_DEBUG_HELP": "YES", "SWIFT_DETERMINISTIC_HASHING": "1",
                   "LD_PRELOAD": "/nonexistent.so", "LC_ALL": "xx_XX.UTF-8"}
            os.execve(sys.argv[1], [sys.argv[1]], env)
        os.close(request_read)
        print(pid, flush=True)
        sys.stdin.readline()
        os.close(request_write)
        print("status=%d" % os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
        """#

    func test_aHostileStart_leavesNoDescriptorLimitSignalOrRuntimeVariable_andTheUserCannotKillIt() throws {
        try Requirement.require(Requirement.isRoot, "root, to read the gatekeeper's /proc entry (CI runs as root)")
        try BuiltGatekeeper.makeSetuidRoot()
        let user = try TestUser.create()
        defer { user.remove() }
        let gatekeeper = BuiltGatekeeper.isBesideTheBuild ? try UserSession.stageTools() + "/keygate-gatekeeper" : BuiltGatekeeper.path
        let folder = user.home + "/hardening"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        _ = try Subprocess.run(["chown", "\(user.name):", folder])
        try launcher.write(toFile: folder + "/launch.py", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder + "/launch.py")

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
        process.arguments = ["-u", user.name, "--", "python3", folder + "/launch.py", gatekeeper, folder + "/stderr"]
        process.currentDirectoryURL = URL(fileURLWithPath: "/")
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let lines = LineReader(output.fileHandleForReading)
        guard let pid = lines.next().flatMap({ Int32($0) }) else { return XCTFail("the launcher printed no pid") }

        // Wait until it has taken root's ids: its start is done, and it waits for a request.
        let status = "/proc/\(pid)/status"
        XCTAssertTrue(Polling.waitUntil(timeout: 10) {
            ((try? String(contentsOfFile: status, encoding: .utf8)) ?? "").contains("Uid:\t0\t0\t0\t0")
        }, "the gatekeeper took root's ids in full: \((try? String(contentsOfFile: status, encoding: .utf8)) ?? "gone")")
        let fields = Self.fields(of: (try? String(contentsOfFile: status, encoding: .utf8)) ?? "")
        XCTAssertEqual(fields["Gid"], "0\t0\t0\t0", "root's group, real and saved too")
        XCTAssertEqual(fields["Groups"] ?? "", "", "no supplementary group of the user's")
        XCTAssertEqual(fields["SigBlk"], "0000000000000000", "an empty signal mask")
        let ignored = UInt64(fields["SigIgn"] ?? "", radix: 16) ?? 0
        let bit = { (signal: Int32) -> UInt64 in 1 << UInt64(signal - 1) }
        XCTAssertEqual(ignored, bit(SIGINT) | bit(SIGQUIT) | bit(SIGPIPE) | bit(SIGXFSZ),
                       "only what the gatekeeper ignores itself: SigIgn \(fields["SigIgn"] ?? "?")")
        let descriptors = (try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")).compactMap(Int32.init).sorted()
        XCTAssertEqual(descriptors, [0, 1, 2], "every descriptor above 2 closed, 1500 too")

        let limits = (try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)) ?? ""
        let fileSize = Self.limit(limits, "Max file size"), openFiles = Self.limit(limits, "Max open files")
        XCTAssertEqual(Self.limit(limits, "Max core file size")?.soft, "0", limits)
        let stack = Self.limit(limits, "Max stack size")
        if Self.mayRaiseHardLimits {
            XCTAssertEqual(fileSize?.soft, "unlimited", "the file-size limit reset: \(limits)")
            XCTAssertEqual(stack?.soft, "8388608", "the stack limit reset: \(limits)")
        } else {
            // No CAP_SYS_RESOURCE in this machine's bounding set (a container): a hard limit the caller
            // lowered stays, and writes fail with EFBIG instead of killing it (GateScopeAttackTests shows
            // what follows).
            XCTAssertEqual(fileSize?.soft, fileSize?.hard, "raised as far as the hard limit: \(limits)")
            XCTAssertEqual(stack?.soft, stack?.hard, "raised as far as the hard limit: \(limits)")
        }
        XCTAssertEqual(openFiles?.soft, "1024", limits)

        // The user who started it cannot signal it.
        let kill = try Subprocess.run(["runuser", "-u", user.name, "--", "kill", "-KILL", String(pid)])
        XCTAssertNotEqual(kill.status, 0, "the user's kill is refused: \(kill.err)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/proc/\(pid)/status"), "and it is still there")

        input.fileHandleForWriting.write(Data("\n".utf8))
        let exit = lines.next()
        process.waitUntilExit()
        XCTAssertEqual(exit, "status=2", "an empty request: exit 2, as before")
        let stderr = (try? String(contentsOfFile: folder + "/stderr", encoding: .utf8)) ?? ""
        if !BuiltGatekeeper.isBesideTheBuild {
            XCTAssertFalse(stderr.contains("Swift runtime debugging"), "SWIFT_DEBUG_HELP never reached the runtime: \(stderr)")
        }
        XCTAssertFalse(stderr.contains("nonexistent.so"), "LD_PRELOAD was ignored for a setuid program: \(stderr)")
    }

    /// CAP_SYS_RESOURCE (bit 24) in this process's bounding set: a setuid-root program may raise hard limits.
    static var mayRaiseHardLimits: Bool {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        return (UInt64(fields(of: status)["CapBnd"] ?? "", radix: 16) ?? 0) & (1 << 24) != 0
    }

    static func fields(of status: String) -> [String: String] {
        var found: [String: String] = [:]
        for line in status.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            found[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return found
    }

    /// The soft and hard value of one row of /proc/PID/limits.
    static func limit(_ limits: String, _ name: String) -> (soft: String, hard: String)? {
        guard let line = limits.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return nil }
        let words = line.dropFirst(name.count).split(separator: " ").map(String.init)
        return words.count >= 2 ? (words[0], words[1]) : nil
    }
}

/// Lines from a pipe, one at a time (blocking).
private final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()

    init(_ handle: FileHandle) { self.handle = handle }

    func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }
}
