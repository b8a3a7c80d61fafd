// The audit trail of the real binary, as a real user through real pam_unix:
// --verbose prints the lines on stderr, and the same lines reach syslog (facility
// authpriv, ident keygate), read from a datagram socket bound at /dev/log when no
// syslog daemon owns it. No line ever holds the password or the secret.
import Foundation
import Glibc
import KeygateTestSupport
import XCTest

final class AuditCLITests: XCTestCase {
    func test_verbose_printsAuthFailureSuccessUnlockAndLock_withoutSecrets() throws {
        let h = try CLIUserHarness()
        _ = try h.run("printf %s 'the-secret' | keygate add -s svc -a a")
        try h.queueAnswers(["wrong-password"])
        let r = try h.run("""
            keygate lock
            keygate --verbose get -s svc -a a >/dev/null; echo get=$?
            keygate lock --verbose; echo lock=$?
            """)
        XCTAssertEqual(r.values["get"], "0", r.summary)
        let lines = r.err.split(separator: "\n").filter { $0.hasPrefix("keygate: audit: ") }
        XCTAssertTrue(lines.contains { $0.contains("auth-failure user=\(h.user.name) pam-service=keygate service=svc account=a scope=") && $0.contains("incorrect password") }, r.err)
        XCTAssertTrue(lines.contains { $0.hasPrefix("keygate: audit: auth-success user=\(h.user.name) pam-service=keygate service=svc account=a ") }, "the item is named: \(r.err)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("keygate: audit: unlock user=\(h.user.name)") }, r.err)
        XCTAssertTrue(lines.contains { $0.hasPrefix("keygate: audit: lock user=\(h.user.name)") && $0.contains("keys dropped") }, r.err)
        XCTAssertFalse(r.err.contains(h.user.password), "the password never appears")
        XCTAssertFalse(r.err.contains("the-secret"), "the secret never appears")
        XCTAssertFalse(r.err.contains("wrong-password"), "not even a wrong password")
    }

    func test_withoutVerbose_nothingOnStderr() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("printf %s s | keygate add -s svc -a a; keygate lock; keygate get -s svc -a a >/dev/null")
        XCTAssertFalse(r.err.contains("audit:"), r.err)
    }

    func test_syslog_receivesAuthprivLines_identKeygate() throws {
        let h = try CLIUserHarness(sharedUser: true)
        guard let listener = try DevLogListener() else {
            throw XCTSkip("/dev/log belongs to a running syslog daemon here: see its log for keygate lines")
        }
        defer { listener.close() }
        let r = try h.run("printf %s 'the-secret' | keygate add -s svc -a a; keygate lock; keygate get -s svc -a a >/dev/null; echo get=$?")
        XCTAssertEqual(r.values["get"], "0", r.summary)
        let datagrams = listener.drain()
        let ours = datagrams.filter { $0.contains("keygate[") && $0.contains("user=\(h.user.name)") }
        // <85> = authpriv (10 << 3) | notice (5).
        XCTAssertTrue(ours.contains { $0.hasPrefix("<85>") && $0.contains("]: auth-success user=\(h.user.name) pam-service=keygate") }, "\(datagrams)")
        XCTAssertTrue(ours.contains { $0.hasPrefix("<85>") && $0.contains("]: unlock user=") }, "\(datagrams)")
        XCTAssertTrue(ours.contains { $0.hasPrefix("<85>") && $0.contains("]: lock user=") }, "\(datagrams)")
        XCTAssertFalse(datagrams.contains { $0.contains(h.user.password) || $0.contains("the-secret") })
    }
}

/// A datagram socket bound at /dev/log for the length of one test, only when nothing
/// else is there; removed by close(). A thread drains it all the time: the kernel
/// queues only a few datagrams (net.unix.max_dgram_qlen), and a full queue would block
/// every program on the machine that logs (useradd, runuser, PAM).
private final class DevLogListener: @unchecked Sendable {
    static let path = "/dev/log"
    private let lock = NSLock()
    private var fd: Int32 = -1
    private var received: [String] = []
    private var running = true
    private var thread: Thread?

    init?() throws {
        if access(Self.path, F_OK) == 0 { return nil }
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw XCTSkip("cannot create a UNIX datagram socket") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in Self.path.utf8.enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else { Glibc.close(fd); return nil }
        chmod(Self.path, 0o666)  // the test user's keygate must be able to send
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let socketFD = fd
        let t = Thread { [weak self] in
            var buffer = [UInt8](repeating: 0, count: 8192)
            while self?.isRunning ?? false {
                let n = buffer.withUnsafeMutableBytes { recv(socketFD, $0.baseAddress, $0.count, 0) }
                if n > 0 { self?.append(String(decoding: buffer[0..<n], as: UTF8.self)) }
            }
        }
        thread = t
        t.start()
    }

    private var isRunning: Bool { lock.withLock { running } }
    private func append(_ line: String) { lock.withLock { received.append(line) } }

    func drain() -> [String] {
        usleep(300_000)   // let the last datagrams arrive
        return lock.withLock { received }
    }

    func close() {
        let wasOpen: Bool = lock.withLock { let open = running; running = false; return open }
        guard wasOpen else { return }
        usleep(200_000)   // the reader wakes within its 100 ms timeout and stops
        unlink(Self.path)
        Glibc.close(fd)
    }

    deinit { close() }
}
