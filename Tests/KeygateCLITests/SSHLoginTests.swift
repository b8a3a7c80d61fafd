// pam_keygate.so under a real sshd: the Debian sshd binary, started by the
// test as root on 127.0.0.1 with its own sshd_config and host key in a temporary folder,
// in a private mount namespace whose /etc/pam.d/sshd is the test's stack (real pam_unix,
// the built module) and whose /dev/log is a capture; a real ssh client typing the test
// user's password through sshpass. Both ways sshd can take a password: "password" (auth
// and session in one process) and "keyboard-interactive" (PAM auth in another process
// than the session), each of which must unlock at login and lock at logout.
import Foundation
import Glibc
import KeygateTestSupport
import XCTest

final class SSHLoginTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    func test_passwordLogin_unlocks_andLogoutLocks() throws {
        try loginUnlocksAndLogoutLocks(method: .password)
    }

    func test_keyboardInteractiveLogin_unlocks_andLogoutLocks() throws {
        try loginUnlocksAndLogoutLocks(method: .keyboardInteractive)
    }

    private func loginUnlocksAndLogoutLocks(method: TestSSHServer.Method) throws {
        try Requirement.require(Requirement.isRoot, "root, to start sshd")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd"), "sshd (openssh-server; scripts/install-deps)")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/sshpass"), "sshpass (scripts/install-deps)")
        try Requirement.require(FileManager.default.fileExists(atPath: PAMModuleTests.modulePath),
                                "the built PAM module at \(PAMModuleTests.modulePath) (run make pam)")
        let h = try CLIUserHarness()
        let made = try h.run("printf %s s1 | keygate add -s svc -a a && keygate lock")
        XCTAssertEqual(made.status, 0, made.summary)
        let uid = h.user.uid
        addTeardownBlock { _ = try? FileManager.default.removeItem(atPath: "/run/keygate/\(uid).sessions") }

        let log = try SyslogCapture()
        let server = try TestSSHServer(method: method, user: h.user.name, log: log, pamStack: """
            auth required pam_unix.so
            auth optional \(PAMModuleTests.module) debug
            account required pam_unix.so
            session required pam_permit.so
            session optional \(PAMModuleTests.module) debug
            password required pam_unix.so
            """)
        defer { server.stop() }

        let client = try SSHClient(port: server.port, method: method, user: h.user)
        XCTAssertTrue(client.waitForLogin(), "the ssh login failed: \(client.output)\nsshd: \(server.log())")
        XCTAssertTrue(server.log().contains(method.acceptedLine + " for \(h.user.name)"),
                      "logged in with \(method.rawValue): \(server.log())")
        let open = try h.run("keygate status; keygate get -s svc -a a", askpass: false)
        XCTAssertTrue(open.out.contains("state: unlocked"), "\(method.rawValue) login unlocks: \(open.summary)\n\(log.lines())")
        XCTAssertTrue(open.out.contains("s1"), open.summary)

        client.logOut()
        var status = ""
        for _ in 0..<50 {  // sshd closes the PAM session as the connection ends
            status = try h.run("keygate status", askpass: false).out
            if status.contains("state: locked") { break }
            Thread.sleep(forTimeInterval: 0.2)
        }
        XCTAssertTrue(status.contains("state: locked"), "logout locks: \(status)\n\(log.lines())")
        XCTAssertFalse(log.lines().contains { $0.contains("no password was captured") }, log.lines().joined(separator: "\n"))
    }
}

/// sshd on 127.0.0.1 and a free port, with a private config, host key and PAM stack.
final class TestSSHServer {
    enum Method: String {
        case password
        case keyboardInteractive = "keyboard-interactive"

        /// sshd's log line for a login by this method.
        var acceptedLine: String { self == .password ? "Accepted password" : "Accepted keyboard-interactive/pam" }
    }

    let folder: String
    let port: UInt16
    private let logPath: String

    init(method: Method, user: String, log capture: SyslogCapture, pamStack: String) throws {
        folder = NSTemporaryDirectory() + "kg-sshd-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let key = try Subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", folder + "/host_ed25519"])
        guard key.status == 0 else { throw DriverBuildError(description: "ssh-keygen: \(key.err)") }
        port = try Self.freePort()
        let kbd = method == .keyboardInteractive
        try """
        Port \(port)
        ListenAddress 127.0.0.1
        HostKey \(folder)/host_ed25519
        PidFile \(folder)/sshd.pid
        UsePAM yes
        KbdInteractiveAuthentication \(kbd ? "yes" : "no")
        PasswordAuthentication \(kbd ? "no" : "yes")
        PubkeyAuthentication no
        PermitRootLogin no
        AllowUsers \(user)
        StrictModes no
        UseDNS no
        PrintMotd no
        LogLevel VERBOSE

        """.write(toFile: folder + "/sshd_config", atomically: true, encoding: .utf8)
        try (pamStack + "\n").write(toFile: folder + "/pam-sshd", atomically: true, encoding: .utf8)
        logPath = folder + "/sshd.log"
        // sshd daemonizes itself (not -D): a long-lived direct child once held up
        // Foundation's reaping of every later child of the test process.
        let started = try Subprocess.run(["/usr/bin/unshare", "-m", "--propagation", "private",
                                          PackagePaths.root + "/Tests/PAMDriver/with-log-socket.sh", capture.folder,
                                          "/usr/sbin/sshd", "-f", folder + "/sshd_config", "-E", logPath],
                                         environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                                                       "KEYGATE_TEST_PAM_SSHD": folder + "/pam-sshd"], timeout: 30)
        for _ in 0..<100 where !log().contains("Server listening") { Thread.sleep(forTimeInterval: 0.1) }
        guard started.status == 0, log().contains("Server listening") else {
            stop()
            throw DriverBuildError(description: "sshd did not start: \(started.summary)\n\(log())")
        }
    }

    /// What sshd logged (-E) so far.
    func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Stops the listener (its pid file's process); sessions end with their connections.
    func stop() {
        if let text = try? String(contentsOfFile: folder + "/sshd.pid", encoding: .utf8),
           let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 1 {
            _ = kill(pid, SIGTERM)
        }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A port the kernel hands out for 127.0.0.1 now (closed again for sshd to take).
    private static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard fd >= 0, bound else { throw DriverBuildError(description: "no free port: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}

/// `sshpass -e ssh ...` running a remote command that touches HOME/logged-in and then
/// stays until HOME/hold is removed (`logOut`). Its input and output are files, never
/// pipes: the test waits on the remote side's files, not on ssh's streams.
final class SSHClient {
    private let process = Process()
    private let home: String
    private let logPath: String

    init(port: UInt16, method: TestSSHServer.Method, user: TestUser) throws {
        home = user.home
        logPath = NSTemporaryDirectory() + "kg-ssh-client-" + UUID().uuidString.prefix(8) + ".log"
        FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sshpass")
        process.arguments = ["-e", "ssh", "-F", "/dev/null", "-p", String(port), "-T",
                             "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                             "-o", "PreferredAuthentications=\(method.rawValue)", "-o", "PubkeyAuthentication=no",
                             "-o", "NumberOfPasswordPrompts=1", "-o", "ConnectTimeout=20",
                             "\(user.name)@127.0.0.1", "touch ~/hold ~/logged-in; while [ -e ~/hold ]; do sleep 0.1; done"]
        // sshpass -e reads the throwaway test user's password from SSHPASS.
        process.environment = ["PATH": "/usr/bin:/bin", "SSHPASS": user.password, "HOME": NSTemporaryDirectory()]
        process.standardInput = FileHandle.nullDevice
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    /// What ssh printed so far.
    var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// True once the remote command ran (within 60 s); false when ssh ended first.
    func waitForLogin() -> Bool {
        for _ in 0..<600 {
            if FileManager.default.fileExists(atPath: home + "/logged-in") { return true }
            if !process.isRunning { return false }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    /// Ends the remote command, so ssh and then sshd's session end.
    func logOut() {
        try? FileManager.default.removeItem(atPath: home + "/hold")
        for _ in 0..<300 where process.isRunning { Thread.sleep(forTimeInterval: 0.1) }
        if process.isRunning { process.terminate() }
    }

    deinit {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(atPath: logPath)
    }
}
