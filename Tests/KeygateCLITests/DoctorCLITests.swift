// `keygate doctor` with the real binary: inside a private session bus with a real
// gnome-keyring it reports the Secret Service OK and exits 0 or with WARNs only;
// with DBUS_SESSION_BUS_ADDRESS pointing at nothing it reports FAIL with the advice
// to start gnome-keyring or use scripts/secret-session, and exits 53.
import Foundation
import KeygateTestSupport
import XCTest

final class DoctorCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private func environment(_ extra: [String: String]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        // These checks are about the Secret Service; pinned, so `auto` never chooses (and
        // records) the embedded store in the caller's data folder.
        env["KEYGATE_STORE"] = "secret-service"
        for (k, v) in extra { env[k] = v }
        return env
    }

    func test_doctor_reportsSecretServiceOK_inPrivateSession() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/gnome-keyring-daemon"), "gnome-keyring")
        let r = try Subprocess.run([PackagePaths.scripts + "/secret-session", "--ephemeral", PackagePaths.keygateBinary, "doctor"],
                                   environment: environment([:]))
        XCTAssertTrue(r.out.contains("OK   secret-service:"), r.out + r.err)
        XCTAssertTrue(r.out.contains("OK   session-bus:"), r.out)
        XCTAssertFalse(r.out.contains("FAIL secret-service"), r.out)
        XCTAssertTrue(r.out.contains("keyring-quota"), r.out)
        // A FAIL elsewhere (say, a missing PAM file on this machine) exits 53; otherwise 0.
        XCTAssertEqual(r.status, r.out.contains("FAIL ") ? 53 : 0, r.out)
    }

    func test_doctor_failsWithAdvice_whenSessionBusPointsAtNothing() throws {
        let r = try Subprocess.run([PackagePaths.keygateBinary, "doctor"],
                                   environment: environment(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/keygate-bus"]))
        XCTAssertEqual(r.status, 53, r.out + r.err)
        let lines = r.out.split(separator: "\n").map(String.init)
        let service = lines.firstIndex { $0.hasPrefix("FAIL secret-service:") }
        XCTAssertNotNil(service, r.out)
        if let i = service {
            XCTAssertTrue(lines[i + 1].contains("gnome-keyring") && lines[i + 1].contains("libexec/keygate/secret-session"), lines[i + 1])
        }
        XCTAssertTrue(r.out.contains("FAIL session-bus: DBUS_SESSION_BUS_ADDRESS names /nonexistent/keygate-bus"), r.out)
    }

    func test_doctor_json_isOneObjectPerCheck_withStatus() throws {
        let r = try Subprocess.run([PackagePaths.keygateBinary, "doctor", "--json"],
                                   environment: environment(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/keygate-bus"]))
        let parsed = try JSONSerialization.jsonObject(with: r.stdout) as? [[String: String]]
        let checks = try XCTUnwrap(parsed, r.out)
        XCTAssertEqual(Set(checks.map { $0["check"] ?? "" }),
                       ["session-bus", "pam-services", "pam-stacks", "policy-files", "host-key", "gatekeeper", "keyring-quota",
                        "same-user-isolation", "audit-log", "fprintd", "pam-fprintd", "enrolled-fingers", "store", "secret-service", "disk-space", "keychain", "timeouts",
                        "lockout"])
        XCTAssertEqual(checks.first { $0["check"] == "secret-service" }?["status"], "FAIL")
        XCTAssertEqual(r.status, 53)
    }

    /// The ptrace and TIOCSTI warning follows this machine's real sysctls, read here independently.
    func test_doctor_warnsAboutPtraceAndTIOCSTI_exactlyWhenThisKernelAllowsThem() throws {
        let r = try Subprocess.run([PackagePaths.keygateBinary, "doctor", "--json"],
                                   environment: environment(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/keygate-bus"]))
        let checks = try XCTUnwrap(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: String]], r.out)
        let check = try XCTUnwrap(checks.first { $0["check"] == "same-user-isolation" }, r.out)
        func sysctl(_ path: String) -> String? {
            (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let ptrace = sysctl("/proc/sys/kernel/yama/ptrace_scope"), tiocsti = sysctl("/proc/sys/dev/tty/legacy_tiocsti")
        let ptraceOpen = ptrace == nil || ptrace == "0", tiocstiOpen = tiocsti == nil || tiocsti == "1"
        XCTAssertEqual(check["status"], ptraceOpen || tiocstiOpen ? "WARN" : "OK", "\(check) with ptrace_scope=\(ptrace ?? "none") legacy_tiocsti=\(tiocsti ?? "none")")
        XCTAssertEqual(check["detail"]?.contains("ptrace"), ptraceOpen, check["detail"] ?? "")
        XCTAssertEqual(check["detail"]?.contains("TIOCSTI"), tiocstiOpen, check["detail"] ?? "")
        if tiocsti == "1" { XCTAssertTrue(check["advice"]?.contains("sysctl -w dev.tty.legacy_tiocsti=0") ?? false, "\(check)") }
    }

    /// Where audit lines go follows whether something listens on this machine's /dev/log, looked at here.
    func test_doctor_saysWhereAuditLinesGo_andWarnsWhenNothingListensOnDevLog() throws {
        let r = try Subprocess.run([PackagePaths.keygateBinary, "doctor", "--json"],
                                   environment: environment(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/keygate-bus"]))
        let checks = try XCTUnwrap(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: String]], r.out)
        let check = try XCTUnwrap(checks.first { $0["check"] == "audit-log" }, r.out)
        var info = stat()
        let listening = lstat("/dev/log", &info) == 0 && (info.st_mode & S_IFMT == S_IFSOCK || info.st_mode & S_IFMT == S_IFLNK)
        if listening {
            XCTAssertEqual(check["status"], "OK", "\(check)")
            XCTAssertTrue(check["detail"]?.hasPrefix("audit lines go to ") ?? false, "\(check)")
            XCTAssertTrue(check["detail"]?.hasSuffix("; the gatekeeper's decisions also to /var/log/keygate/users/UID.log (root's)")
                          ?? false, "\(check)")
        } else {
            XCTAssertEqual(check["status"], "WARN", "\(check)")
            XCTAssertEqual(check["detail"], """
                nothing listens on /dev/log: the audit lines of keygate and pam_keygate are lost (the gatekeeper's decisions are \
                still kept in /var/log/keygate/users/UID.log, root's)
                """)
            XCTAssertTrue(check["advice"]?.contains("rsyslog") ?? false, "\(check)")
        }
    }

    /// The advice names the paths of the install that runs, not Debian's or the source tree's. A
    /// prefix laid out as `make install` lays out /usr/local (bin/, libexec/keygate/, share/doc/keygate/examples/).
    func test_doctor_advice_namesTheInstallsOwnPaths() throws {
        let prefix = NSTemporaryDirectory() + "keygate-prefix-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: prefix) }
        let fm = FileManager.default
        for folder in ["bin", "libexec/keygate", "share/doc/keygate/examples"] {
            try fm.createDirectory(atPath: prefix + "/" + folder, withIntermediateDirectories: true)
        }
        try fm.copyItem(atPath: PackagePaths.keygateBinary, toPath: prefix + "/bin/keygate")
        try fm.copyItem(atPath: PackagePaths.scripts + "/secret-session", toPath: prefix + "/libexec/keygate/secret-session")
        try fm.copyItem(atPath: PackagePaths.root + "/contrib/systemd/keygate-secret-service.service",
                        toPath: prefix + "/share/doc/keygate/examples/keygate-secret-service.service")
        let r = try Subprocess.run([prefix + "/bin/keygate", "doctor"],
                                   environment: environment(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/keygate-bus"]))
        let lines = r.out.split(separator: "\n").map(String.init)
        let bus = try XCTUnwrap(lines.firstIndex { $0.hasPrefix("FAIL session-bus:") }, r.out)
        XCTAssertEqual(lines[bus + 1], """
                 -> start a session bus with gnome-keyring: log in to a desktop session, enable the user unit \
            \(prefix)/share/doc/keygate/examples/keygate-secret-service.service, or run the command under \
            \(prefix)/libexec/keygate/secret-session
            """)
        XCTAssertFalse(r.out.contains("contrib/systemd"), "no path of the source tree: \(r.out)")
    }

    /// gnome-keyring answering with no default collection (a fresh home, nobody logged
    /// in to a desktop) is a store choice doctor names: the Secret Service that runs (never the embedded store,
    /// silently), why, and what to do.
    func test_doctor_namesTheStoreChoice_whenGnomeKeyringHasNoDefaultCollection() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/gnome-keyring-daemon"), "gnome-keyring")
        let home = NSTemporaryDirectory() + "keygate-nodefault-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: home) }
        let script = """
            eval "$(gnome-keyring-daemon --start --components=secrets 2>/dev/null)"
            "\(PackagePaths.keygateBinary)" doctor --json
            """
        let r = try Subprocess.run(["dbus-run-session", "--", "bash", "-c", script],
                                   environment: ["PATH": "/usr/bin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/data"], timeout: 60)
        let checks = try XCTUnwrap(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: String]], r.out + r.err)
        let store = try XCTUnwrap(checks.first { $0["check"] == "store" }, r.out)
        XCTAssertEqual(store["status"], "OK", "\(store)")
        XCTAssertTrue(store["detail"]?.contains("Secret Service (auto (the default): a Secret Service runs, but gnome-keyring has no "
                                                + "default collection: create one") ?? false, "\(store)")
        XCTAssertFalse(r.out.contains("items.sqlite"), "not the embedded store: \(r.out)")
    }
}
