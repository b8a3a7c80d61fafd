// Real fprintd, polkitd and libfprint's virtual fingerprint device on a private system bus,
// started by scripts/fprint-session for one test (skips locally, fails under CI, when fprintd
// is missing). The session lives until its stop file appears: `stop()` makes it, and the
// script stops what it started, by pid. (Not the end of a pipe: every process the test starts
// afterwards, a user's gnome-keyring among them, inherits the pipe's open end.) A "finger" is
// a name: `touch("finger-a")` rests it on the reader, scanned once by each verification that
// starts, until `settle()` lifts it; `enroll` scans one five times. The test puts fingers
// there as root: the device's socket is root's.
import Foundation

public final class FprintSession: @unchecked Sendable {
    // @unchecked: set once in init; `process` is only used by stop(); `fingers` is locked.
    /// The variables the script exports (KEYGATE_TEST_SYSTEM_BUS, KEYGATE_FPRINT_TOUCH, ...).
    public let values: [String: String]
    private let process: Process
    private let stopFile: String
    /// The fingers resting on the reader (touch), which settle() lifts.
    private let fingers = LockedValue<[Process]>([])

    /// What a test-hook gatekeeper needs: the private bus and fprintd's print folder.
    public var gatekeeperEnvironment: [String: String] {
        ["KEYGATE_TEST_SYSTEM_BUS": values["KEYGATE_TEST_SYSTEM_BUS"] ?? "",
         "KEYGATE_TEST_FPRINT_DIR": values["KEYGATE_TEST_FPRINT_DIR"] ?? ""]
    }
    /// For fprintd-enroll, fprintd-list, fprintd-delete run by the test (root).
    public var toolEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["DBUS_SYSTEM_BUS_ADDRESS": values["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""]) { _, n in n }
    }

    public init() throws {
        for (path, package) in [("/usr/libexec/fprintd", "fprintd"), ("/usr/lib/x86_64-linux-gnu/security/pam_fprintd.so", "libpam-fprintd"),
                                ("/usr/lib/polkit-1/polkitd", "polkitd"), ("/usr/bin/dbus-daemon", "dbus-daemon"),
                                ("/usr/bin/python3", "python3")] {
            try Requirement.require(FileManager.default.fileExists(atPath: path),
                                    "\(path) (apt-get install \(package), or run scripts/install-deps)")
        }
        try Requirement.require(Requirement.isRoot, "root, to run fprintd and polkitd (CI runs as root)")
        let envFile = FileManager.default.temporaryDirectory.appendingPathComponent("kg-fprint-\(UUID().uuidString.prefix(8)).env").path
        process = Process()
        process.executableURL = URL(fileURLWithPath: PackagePaths.scripts + "/fprint-session")
        stopFile = envFile + ".stop"
        process.arguments = ["--", "sh", "-c", """
            env | grep -E '^(KEYGATE_|DBUS_SYSTEM)' > "$1.tmp" && mv "$1.tmp" "$1"
            while [ ! -e "$1.stop" ]; do sleep 0.2; done
            """, "sh", envFile]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        var found: [String: String] = [:]
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, process.isRunning {
            if let text = try? String(contentsOfFile: envFile, encoding: .utf8) {
                for line in text.split(separator: "\n") {
                    let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
                    if parts.count == 2 { found[parts[0]] = parts[1] }
                }
                break
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        try? FileManager.default.removeItem(atPath: envFile)
        values = found
        guard found["KEYGATE_FPRINT_TOUCH"] != nil else {
            stop()
            throw RequirementMissing(description: "scripts/fprint-session did not start fprintd (FPRINT_SESSION_DEBUG=1 shows why)")
        }
    }

    deinit { stop() }

    /// Ends the session: fprintd, polkitd and the bus stop, the polkit rule and the prints go.
    public func stop() {
        serving.withLock { $0 = false }
        settle()
        guard process.isRunning else { return }
        _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: stopFile)
    }

    /// fprintd's pid now (it changes when a test restarts it).
    public var fprintdPID: pid_t? {
        guard let file = values["KEYGATE_FPRINT_FPRINTD_PID_FILE"],
              let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        return pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Starts fprintd again (after a test stopped it).
    public func restartFprintd() throws {
        _ = try Subprocess.run([values["KEYGATE_FPRINT_RESTART"] ?? "/bin/false"], timeout: 30)
    }

    /// Puts the finger `name` on the reader, in the background, for the verifications to come:
    /// it rests there, and touches once after each verification fprintd starts from now on (as a
    /// real reader scans a finger touched after it began to listen), until settle() lifts it or
    /// for 60 s. The previous finger is lifted first. `stamps`: a file that gets each scan's time
    /// (ns). (scripts/fprint-session's `touch` says why a scan must come after the start.)
    public func touch(_ name: String, stamps: String? = nil) {
        settle()
        let log = values["KEYGATE_FPRINT_LOG"] ?? ""
        let now = ((try? FileManager.default.attributesOfItem(atPath: log))?[.size] as? NSNumber)?.intValue ?? 0
        let process = Process()
        process.executableURL = URL(fileURLWithPath: values["KEYGATE_FPRINT_TOUCH"] ?? "/bin/false")
        process.arguments = ["--verify", "--from", String(now), name] + (stamps.map { [$0] } ?? [])
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        if (try? process.run()) != nil { fingers.withLock { $0.append(process) } }
    }

    /// What fprintd and the fingers did lately, for a failure's message: the fingers' scans
    /// (touch.log) and the end of fprintd's log, with libfprint's lines.
    public func postMortem(lines: Int = 60) -> String {
        let log = values["KEYGATE_FPRINT_LOG"] ?? ""
        let scans = (try? String(contentsOfFile: (log as NSString).deletingLastPathComponent + "/touch.log", encoding: .utf8)) ?? ""
        let fprintd = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(lines)
        return "FPRINT POST-MORTEM\nscans (time, finger):\n\(scans)fprintd's log, its last \(lines) lines:\n"
            + fprintd.joined(separator: "\n")
    }

    /// Lifts every finger resting on the reader: call it once the read it was for is done, so
    /// that it cannot touch the next one.
    public func settle() {
        for process in fingers.withLock({ list in defer { list.removeAll() }; return list }) where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Lets a user's script choose the finger on the reader within one run (one unlocked
    /// keychain, one scope): the script calls `finger NAME` (`fingerFunction`, "none" lifts it),
    /// which writes NAME to FOLDER/want-finger and waits until FOLDER/finger-on says it; the
    /// test's thread, as root (the device's socket is root's), puts it there as touch() does.
    /// Serves until stop().
    public func serveFingerRequests(in folder: String) {
        serving.withLock { $0 = true }
        Thread.detachNewThread { [weak self] in
            var current = ""
            while let self, self.serving.withLock({ $0 }) {
                let wanted = ((try? String(contentsOfFile: folder + "/want-finger", encoding: .utf8)) ?? "")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                if !wanted.isEmpty, wanted != current {
                    if wanted == "none" { self.settle() } else { self.touch(wanted) }
                    current = wanted
                    _ = FileManager.default.createFile(atPath: folder + "/finger-on", contents: Data((wanted + "\n").utf8),
                                                   attributes: [.posixPermissions: 0o644])
                }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
    }

    /// The shell function a script served by serveFingerRequests(in: "$HOME") uses: `finger NAME`.
    public static let fingerFunction = """
        finger() {
            echo "$1" > "$HOME/want-finger"
            for i in $(seq 100); do [ "$(cat "$HOME/finger-on" 2>/dev/null)" = "$1" ] && return 0; sleep 0.05; done
            echo "finger $1 was never put on the reader" >&2
        }
        """

    private let serving = LockedValue(false)

    /// Enrolls `finger` (fprintd's name, e.g. right-index-finger) for `user` with the scans of `name`.
    public func enroll(_ user: String, finger: String = "right-index-finger", as name: String) throws {
        let touch = values["KEYGATE_FPRINT_TOUCH"] ?? "/bin/false"
        let script = """
            fprintd-enroll -f "$1" "$2" & pid=$!
            for i in 1 2 3 4 5; do "$3" "$4" || exit 3; sleep 0.2; done
            wait $pid
            """
        let r = try Subprocess.run(["sh", "-c", script, "sh", finger, user, touch, name], environment: toolEnvironment, timeout: 60)
        guard r.status == 0, r.out.contains("enroll-completed") else {
            throw RequirementMissing(description: "fprintd-enroll did not complete: \(r.out) \(r.err)")
        }
        // fprintd closes the device a moment after the enrollment; a finger put on it before
        // that would be scanned into the closing device, not the next verification.
        Thread.sleep(forTimeInterval: 2)
    }

    /// Deletes every print of `user`.
    public func deletePrints(_ user: String) throws {
        _ = try Subprocess.run(["fprintd-delete", user], environment: toolEnvironment, timeout: 30)
    }
}
