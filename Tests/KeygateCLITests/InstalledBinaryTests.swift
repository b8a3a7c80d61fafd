// What only the installed binary can show: the paths it names are the installed ones. Runs
// in make check's release pass (KEYGATE_TERMINAL_BINARY, the binary `make install` put on
// PATH), and on the debug build, where it checks the message for a source tree.
import Foundation
import KeygateTestSupport
import XCTest

final class InstalledBinaryTests: XCTestCase {
    /// Advice names the secret-session that `make install` or the .deb installed, which exists
    /// and runs, not a path in a source checkout.
    func test_noBusAdvice_namesTheInstalledSecretSession() throws {
        let (binary, installed) = TerminalShell.binary
        try Requirement.require(FileManager.default.isExecutableFile(atPath: binary), "the keygate binary at \(binary)")
        let r = try Subprocess.run([binary, "list"], environment: [
            "PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "KEYGATE_STORE": "secret-service",
        ])
        XCTAssertEqual(r.status, 53, r.err)
        XCTAssertFalse(r.err.contains("scripts/secret-session or"), "a source path: \(r.err)")
        guard installed else {
            XCTAssertTrue(r.err.contains("libexec/keygate/secret-session"), r.err)
            return
        }
        let prefix = ((binary as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        let tool = prefix + "/libexec/keygate/secret-session"
        XCTAssertTrue(r.err.contains("or run under \(tool)"), r.err)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: tool), tool)
        XCTAssertEqual(try Subprocess.run([tool, "--help"]).status, 0)
    }

    /// Release builds read no test hook: a hook the debug build refuses (a lock-after of "soon")
    /// is an error there, naming it, and is not even looked at by the installed binary. A hook that
    /// would weaken it (no PAM service folder of the caller's) is never honoured either.
    func test_testHooks_areNotReadByTheInstalledBinary() throws {
        let (binary, installed) = TerminalShell.binary
        try Requirement.require(FileManager.default.isExecutableFile(atPath: binary), "the keygate binary at \(binary)")
        let home = NSTemporaryDirectory() + "kg-hooks-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let r = try Subprocess.run([binary, "list"], environment: [
            "PATH": "/usr/bin:/bin", "HOME": home, "KEYGATE_STORE": "embedded", "KEYGATE_TEST_LOCK_AFTER": "soon",
        ])
        if installed {
            XCTAssertEqual(r.status, 0, r.err)
            XCTAssertFalse(r.err.contains("KEYGATE_TEST"), r.err)
        } else {
            XCTAssertEqual(r.status, 206, r.err)  // errSecParam
            XCTAssertTrue(r.err.contains("KEYGATE_TEST_LOCK_AFTER=soon is not a whole number of seconds: fix or unset it (a test hook)"),
                          r.err)
        }
    }

    /// A read as a normal user writes nothing to the system log on its own: libdispatch's worker
    /// threads log "Failed to set thread priority ... errno=13" at every run of a normal user, so
    /// the bus deadline is a watchdog thread (CSystem/watchdog.h), not a libdispatch timer.
    /// LIBDISPATCH_LOG=stderr shows here what would have gone to syslog.
    func test_aReadAsAUser_logsNothingFromLibdispatch() throws {
        let (binary, installed) = TerminalShell.binary
        try Requirement.require(Requirement.isRoot, "root, to create a test user")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: binary), "the keygate binary at \(binary)")
        let user = try TestUser.create()
        defer { user.remove() }
        let tools = try UserSession.stageTools()
        let keygate = installed ? binary : tools + "/keygate"
        let r = try Subprocess.run(["runuser", "-u", user.name, "--", "env", "-i", "HOME=\(user.home)", "PATH=/usr/bin:/bin",
                                    "LIBDISPATCH_LOG=stderr", "KEYGATE_STORE=secret-service",
                                    tools + "/secret-session", keygate, "list"],
                                   environment: TestUser.systemEnvironment, currentDirectory: "/", timeout: 60)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertFalse(r.err.contains("thread priority"), r.err)
        XCTAssertFalse(r.err.contains("log file opened"), "libdispatch logged something: \(r.err)")
    }

    /// The example service unit `make install` put in the docs runs the installed binary, with
    /// no placeholder and no other prefix left (the .deb's is checked by scripts/check-deb).
    func test_installedExampleUnit_runsTheInstalledKeygate() throws {
        let (binary, installed) = TerminalShell.binary
        guard installed else {
            let template = try String(contentsOfFile: PackagePaths.root + "/contrib/systemd/keygate-example-service.service", encoding: .utf8)
            XCTAssertTrue(template.contains("ExecStartPre=+@BINDIR@/keygate unlock"), "the source tree keeps the placeholder")
            return
        }
        let prefix = ((binary as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        let unit = try String(contentsOfFile: prefix + "/share/doc/keygate/examples/keygate-example-service.service", encoding: .utf8)
        XCTAssertFalse(unit.contains("@BINDIR@") || unit.contains("@LIBEXECDIR@"), unit)
        let commands = unit.split(separator: "\n").filter { $0.hasPrefix("ExecStart") }
        XCTAssertEqual(commands.count, 2, unit)
        for line in commands {
            let program = line.split(separator: "=", maxSplits: 1).last.map { String($0.drop { $0 == "+" }) }?
                .split(separator: " ").first.map(String.init) ?? ""
            XCTAssertEqual(program, binary, "\(line)")
            XCTAssertTrue(FileManager.default.isExecutableFile(atPath: program), program)
        }
        XCTAssertTrue(unit.contains(prefix + "/libexec/keygate/secret-session"), unit)
    }

    /// docs/SERVICES.md with what `make install` put on the system: the installed binary, the real
    /// host key (/var/lib/keygate, made by make install), a system policy in /etc/keygate/policies.d
    /// naming the account, and the account with no session bus. The debug pass covers the same
    /// steps through its test hooks (HostProtectorTests.test_servicesGuide_stepByStep_…); this one
    /// runs in the release pass only.
    func test_servicesGuide_withTheInstalledBinary_asRootAndAsTheServiceAccount() throws {
        let (binary, installed) = TerminalShell.binary
        guard installed else { return }
        try Requirement.require(Requirement.isRoot, "root")
        let svc = try TestUser.create()
        defer { svc.remove() }
        let policy = "/etc/keygate/policies.d/90-keygate-test-\(svc.name).policy"
        try FileManager.default.createDirectory(atPath: "/etc/keygate/policies.d", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        try "[default]\nhost-protector = \(svc.name)\n\n[service \"backup-*\"]\naccess = none\nallow-non-interactive = yes\naccessible = after-first-unlock\n"
            .write(toFile: policy, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: policy) }
        chmod(policy, 0o644)
        let root = TestUser.systemEnvironment
        func asService(_ command: String) throws -> ProcessResult {
            try Subprocess.run(["runuser", "-u", svc.name, "--", "env", "-i", "HOME=\(svc.home)", "PATH=/usr/bin:/bin",
                                "bash", "-c", command], environment: root, currentDirectory: "/", timeout: 60)
        }
        let made = try Subprocess.run([binary, "init", "--host-protector", "--user", svc.name], environment: root, timeout: 60)
        XCTAssertEqual(made.status, 0, made.summary)
        let added = try asService("printf %s s3-key | \(binary) add -s backup-s3 -a key --accessible after-first-unlock; echo add=$?")
        XCTAssertEqual(added.values["add"], "0", added.summary)
        XCTAssertEqual(try Subprocess.run(["runuser", "-u", svc.name, "--", "keyctl", "clear", "@u"], environment: root).status, 0)
        let locked = try asService("\(binary) get -s backup-s3 -a key; echo get=$?")
        XCTAssertEqual(locked.values["get"], "36", "after a reboot, before the boot step: \(locked.summary)")
        let boot = try Subprocess.run([binary, "unlock", "--host-protector", "--user", svc.name], environment: root, timeout: 60)
        XCTAssertEqual(boot.status, 0, boot.summary)
        let read = try asService("printf 'v=%s\\n' \"$(\(binary) get -s backup-s3 -a key)\"")
        XCTAssertEqual(read.values["v"], "s3-key", read.summary)
        // The example unit's ExecStart: the secret reaches the program in its environment.
        let exec = try asService("\(binary) exec -s backup-s3 -a key --env S3_SECRET_KEY -- "
                                 + "sh -c 'test \"$S3_SECRET_KEY\" = s3-key && echo exec=ok'")
        XCTAssertEqual(exec.values["exec"], "ok", exec.summary)
    }

    /// The gatekeeper `make install` put in <prefix>/libexec/keygate (docs/GATEKEEPER.md): a
    /// regular file, root's, mode 4755. Run by a normal user, empty input exits 2 and prints
    /// nothing; a malformed request is answered with one result frame (errSecParam, a message)
    /// and touches no state: no /var/lib/keygate/gate/<uid>, no /run/keygate/ts/<uid>. The debug
    /// pass runs the same two requests against the debug build's gatekeeper (not setuid).
    /// Every installed program is bound at start, with full RELRO: ld.so resolves each imported
    /// function before main and then makes the table read-only, so a stray write cannot redirect a
    /// call. Lazy binding would leave .got.plt writable for the life of the process, which matters
    /// most in the setuid gatekeeper and the login helper (root), but every one of them holds keys.
    func test_installedPrograms_areBoundAtStart_withFullRELRO() throws {
        let (binary, installed) = TerminalShell.binary
        guard installed else { return }
        let prefix = ((binary as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        let programs = [binary] + ["keygate-gatekeeper", "keygate-pam-helper", "keygate-secret-service"]
            .map { prefix + "/libexec/keygate/" + $0 }
        for program in programs {
            let dynamic = try Subprocess.run(["readelf", "-dW", program])
            try Requirement.require(dynamic.status == 0, "readelf (apt-get install binutils) reading \(program)")
            let flags = dynamic.out.split(separator: "\n").filter { $0.contains("(FLAGS)") || $0.contains("(FLAGS_1)") }
            XCTAssertTrue(flags.contains { $0.contains("BIND_NOW") } && flags.contains { $0.contains(" NOW") },
                          "\(program) is linked for lazy binding (no -z now): \(flags)")
            // The read-only range (GNU_RELRO: type, offset, address, physical address, file size,
            // memory size) must cover the lazily bound functions' table, .got.plt, where there is one.
            let segments = try Subprocess.run(["readelf", "-lW", program])
            let relro = segments.out.split(separator: "\n").first { $0.contains("GNU_RELRO") }?
                .split(separator: " ", omittingEmptySubsequences: true).compactMap { UInt64($0.dropFirst(2), radix: 16) } ?? []
            guard relro.count >= 5 else { XCTFail("\(program) has no RELRO segment: \(segments.out)"); continue }
            let (start, end) = (relro[1], relro[1] + relro[4])
            let sections = try Subprocess.run(["readelf", "-SW", program])
            // "[44] .got.plt PROGBITS ADDRESS OFFSET SIZE ...".
            if let got = sections.out.split(separator: "\n").first(where: { $0.contains(" .got.plt ") })?
                .split(separator: " ", omittingEmptySubsequences: true),
               let at = got.firstIndex(of: "PROGBITS"), got.count > at + 3,
               let address = UInt64(got[at + 1], radix: 16), let size = UInt64(got[at + 3], radix: 16) {
                XCTAssertTrue(address >= start && address + size <= end,
                              "\(program)'s .got.plt (\(String(address, radix: 16)), \(size) bytes) lies outside RELRO "
                              + "(\(String(start, radix: 16))..<\(String(end, radix: 16))): it stays writable")
            }
        }
    }

    func test_installedGatekeeper_isSetuidRoot_andRefusesGarbageBeforeAnyState() throws {
        let (binary, installed) = TerminalShell.binary
        let gatekeeper: String
        if installed {
            let prefix = ((binary as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
            gatekeeper = prefix + "/libexec/keygate/keygate-gatekeeper"
            var info = stat()
            XCTAssertEqual(lstat(gatekeeper, &info), 0, "\(gatekeeper) is missing: make install must put it there")
            XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG, "\(gatekeeper) is not a regular file")
            XCTAssertEqual(info.st_uid, 0, "\(gatekeeper) owner")
            XCTAssertEqual(info.st_gid, 0, "\(gatekeeper) group")
            XCTAssertEqual(String(info.st_mode & 0o7777, radix: 8), "4755", "\(gatekeeper) mode")
        } else {
            gatekeeper = PackagePaths.buildProducts + "/keygate-gatekeeper"
        }
        try Requirement.require(FileManager.default.isExecutableFile(atPath: gatekeeper), "the gatekeeper at \(gatekeeper)")
        try Requirement.require(Requirement.isRoot, "root, to create a test user")
        let user = try TestUser.create()
        defer { user.remove() }
        let state = ["/var/lib/keygate/gate", "/run/keygate/ts", "/var/lib/keygate/gate/\(user.uid)", "/run/keygate/ts/\(user.uid)"]
        let before = state.map { FileManager.default.fileExists(atPath: $0) }
        XCTAssertEqual(before[2...], [false, false], "a new user has no gatekeeper state yet")
        func asUser(_ input: [UInt8]) throws -> ProcessResult {
            try Subprocess.run(["runuser", "-u", user.name, "--", "env", "-i", "PATH=/usr/bin:/bin", gatekeeper],
                               stdin: Data(input), environment: TestUser.systemEnvironment, currentDirectory: "/", timeout: 30)
        }

        let empty = try asUser([])
        XCTAssertEqual(empty.status, 2, "empty input: \(empty.err)")
        XCTAssertTrue(empty.stdout.isEmpty && empty.stderr.isEmpty, "empty input printed something: \(empty.out) \(empty.err)")

        // A request frame of another version ('Q', 2, ...), framed as the client frames it.
        let garbage: [UInt8] = [UInt8(ascii: "Q"), 2, 1, 0, 0, 0, 0, 0, 0, 0, 0]
        let refused = try asUser([0, 0, 0, UInt8(garbage.count)] + garbage)
        XCTAssertEqual(refused.status, 0, "the refusal is an answer, not a crash: \(refused.err)")
        XCTAssertTrue(refused.stderr.isEmpty, refused.err)
        let out = [UInt8](refused.stdout)
        XCTAssertGreaterThanOrEqual(out.count, 11, "no result frame: \(out)")
        if out.count >= 11 {
            let length = Int(out[0]) << 24 | Int(out[1]) << 16 | Int(out[2]) << 8 | Int(out[3])
            XCTAssertEqual(length, out.count - 4, "one frame, nothing after it")
            XCTAssertEqual(out[4], UInt8(ascii: "R"), "a result frame")
            let status = Int32(bitPattern: UInt32(out[5]) << 24 | UInt32(out[6]) << 16 | UInt32(out[7]) << 8 | UInt32(out[8]))
            XCTAssertEqual(status, -50, "errSecParam")
            let textLength = Int(out[9]) << 8 | Int(out[10])
            let message = String(decoding: out.dropFirst(11).prefix(textLength), as: UTF8.self)
            XCTAssertTrue(message.contains("malformed request") && message.contains("reinstall keygate"), message)
        }
        XCTAssertEqual(state.map { FileManager.default.fileExists(atPath: $0) }, before, "the gatekeeper created state for garbage")
    }

    /// A mistyped verb, with the binary people run: a suggestion and exit 2, for `help` too.
    func test_mistypedVerb_suggests_andHelpOfAnUnknownVerbExits2() throws {
        let (binary, _) = TerminalShell.binary
        try Requirement.require(FileManager.default.isExecutableFile(atPath: binary), "the keygate binary at \(binary)")
        for argv in [["gte", "-s", "x", "-a", "y"], ["help", "gte"]] {
            let r = try Subprocess.run([binary] + argv, environment: TestUser.systemEnvironment)
            XCTAssertEqual(r.status, 2, "\(argv): \(r.err)")
            XCTAssertTrue(r.err.contains("did you mean 'get'?"), "\(argv): \(r.err)")
        }
    }

    /// Read-only commands change nothing on disk, with the binary people run: a user with no
    /// bus runs doctor, status, list, exists and get, and no data folder appears.
    func test_readOnlyCommands_writeNothing_forAUserWithoutABus() throws {
        let (binary, installed) = TerminalShell.binary
        try Requirement.require(Requirement.isRoot, "root, to create a test user")
        let user = try TestUser.create()
        defer { user.remove() }
        let keygate = installed ? binary : try UserSession.stageTools() + "/keygate"
        let r = try Subprocess.run(["runuser", "-u", user.name, "--", "env", "-i", "HOME=\(user.home)", "PATH=/usr/bin:/bin",
                                    "bash", "-c", """
            for verb in doctor status list "exists -s v -a a" "get -s v -a a"; do \(keygate) $verb >/dev/null 2>&1; done
            [ -e "$HOME/.local/share/keygate" ] && echo wrote=yes || echo wrote=no
            """], environment: TestUser.systemEnvironment, currentDirectory: "/", timeout: 60)
        XCTAssertEqual(r.values["wrote"], "no", r.summary)
    }

    /// The Python keyring backend is where a fresh account's `python3 -m keyring` finds it, through
    /// its entry point. The release pass checks what `make install` installed, with nothing set for Python; the
    /// debug pass runs the Makefile's own install and uninstall into a staging DESTDIR (stand-ins for the
    /// release build: nothing is built) and points PYTHONPATH at it. The .deb's is checked by scripts/check-deb.
    func test_pythonKeyringBackend_isFoundByAFreshAccountsPython3() throws {
        let (binary, installed) = TerminalShell.binary
        try Requirement.require(Requirement.isRoot, "root, to create a test user")
        let probe = try Subprocess.run(["/usr/bin/python3", "-c", "import keyring"])
        try Requirement.require(probe.status == 0, "/usr/bin/python3 with keyring (python3-keyring, scripts/install-deps)")
        let user = try TestUser.create()
        defer { user.remove() }
        var pythonPath = ""
        var stage = ""
        if !installed {
            stage = NSTemporaryDirectory() + "keygate-pystage-\(UUID().uuidString)"
            addTeardownBlock { [stage] in try? FileManager.default.removeItem(atPath: stage) }
            XCTAssertEqual(try runMakeLines("install", stage: stage), 0)
            let site = try Subprocess.run(["/usr/bin/python3", "-c", "import sys; print('/usr/local/lib/python%d.%d/dist-packages' % sys.version_info[:2])"])
            pythonPath = stage + site.out.trimmingCharacters(in: .whitespacesAndNewlines)
            XCTAssertTrue(FileManager.default.fileExists(atPath: pythonPath + "/keyrings/keygate/__init__.py"),
                          "make install puts it in the folder Debian's python3 reads under /usr/local: \(pythonPath)")
            _ = try Subprocess.run(["chmod", "-R", "a+rX", stage])
        }
        let bindir = installed ? (binary as NSString).deletingLastPathComponent : try UserSession.stageTools()
        let r = try Subprocess.run(["runuser", "-u", user.name, "--", "env", "-i", "HOME=\(user.home)", "PATH=\(bindir):/usr/bin:/bin"]
                                   + (pythonPath.isEmpty ? [] : ["PYTHONPATH=\(pythonPath)"]) + ["bash", "-c", """
            cd "$HOME"
            /usr/bin/python3 -m keyring --list-backends | sed 's/^/backend: /'
            echo chosen=$(/usr/bin/python3 -c 'import keyring; print(type(keyring.get_keyring()).__name__)')
            """], environment: TestUser.systemEnvironment, currentDirectory: "/", timeout: 60)
        XCTAssertTrue(r.out.contains("backend: keyrings.keygate.KeygateKeyring (priority: 15)"), r.summary)
        XCTAssertEqual(r.values["chosen"], "KeygateKeyring", r.summary)
        if !installed {
            XCTAssertEqual(try runMakeLines("uninstall", stage: stage), 0)
            XCTAssertFalse(FileManager.default.fileExists(atPath: pythonPath + "/keyrings"), "make uninstall removes it")
            let distInfo = (try? FileManager.default.contentsOfDirectory(atPath: pythonPath)) ?? []
            XCTAssertEqual(distInfo.filter { $0.contains("keygate") }, [], "and its .dist-info")
        }
    }

    /// A release read scans the Swift runtime's protocol conformance records at most once. The runtime
    /// walks every record (about 3,600, ~150,000 instructions) the first time a generic type's metadata,
    /// built from its mangled name, needs a protocol requirement checked that no earlier walk cached:
    /// a `Result` or a `Dictionary` of Keygate's own types on the read path can cost a whole walk
    /// (docs/DECISIONS.md, "The gated read's start-up: no generic Result in the policy parser, the
    /// daemon's sd-bus table apart"). Counted with callgrind: how often the walk's per-record callback
    /// ran, against the records the binary holds. Release pass only: the debug build's unspecialised
    /// generics walk far more, in a runtime that is a shared library with records of its own.
    func test_aRead_walksTheConformanceRecordsAtMostOnce() throws {
        let (binary, installed) = TerminalShell.binary
        guard installed else { return }
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/valgrind"), "valgrind (apt-get install valgrind)")
        let sections = try Subprocess.run(["readelf", "-SW", binary])
        try Requirement.require(sections.status == 0, "readelf (apt-get install binutils)")
        // "[13] swift5_protocol_conformances PROGBITS ADDRESS OFFSET SIZE ...": four bytes a record.
        let fields = sections.out.split(separator: "\n").first { $0.contains(" swift5_protocol_conformances ") }?
            .split(separator: " ", omittingEmptySubsequences: true) ?? []
        guard let at = fields.firstIndex(of: "PROGBITS"), fields.count > at + 3, let size = Int(fields[at + 3], radix: 16) else {
            return XCTFail("no swift5_protocol_conformances section in \(binary): \(sections.out)")
        }
        let records = size / 4
        XCTAssertGreaterThan(records, 1000, "the static runtime's and the standard library's records are in the binary")

        // A read that parses a policy section (the user's layer) and finds no item, in the embedded store.
        let home = NSTemporaryDirectory() + "kg-scans-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home + "/.config/keygate/policies.d", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: home) }
        try "[service \"scan-*\"]\naccess = none\n".write(toFile: home + "/.config/keygate/policies.d/scan.policy", atomically: true,
                                                          encoding: .utf8)
        let profile = home + "/read.cg"
        let read = try Subprocess.run(["/usr/bin/valgrind", "--tool=callgrind", "--callgrind-out-file=" + profile,
                                       binary, "get", "-s", "scan-check", "-a", "nobody"],
                                      environment: ["PATH": "/usr/bin:/bin", "HOME": home, "KEYGATE_STORE": "embedded"], timeout: 300)
        XCTAssertTrue(read.err.contains("no item for scan-check/nobody"), "the read ran to its end: \(read.summary)")
        let visits = try conformanceRecordVisits(callgrindFile: profile)
        // A read may walk no record at all (release builds reach metadata through accessors). Zero
        // means that only while the binary holds the callback under the name the count looks for.
        let symbols = try Subprocess.run(["readelf", "-sW", binary])
        XCTAssertTrue(symbols.out.split(separator: "\n").contains {
            $0.contains("swift_conformsToProtocolMaybeInstantiateSuperclasses") && $0.contains("TargetProtocolConformanceDescriptor")
        }, "the binary holds no conformance walk callback named as the count expects: is the runtime's walk named otherwise "
           + "in this Swift (swift_conformsToProtocolMaybeInstantiateSuperclasses)? The count below would hold nothing")
        XCTAssertLessThanOrEqual(visits, records, "the read walked the \(records) conformance records \(Double(visits) / Double(records)) "
                                 + "times: a generic type on the read path has its requirements checked at run time "
                                 + "(callgrind_annotate --tree=caller \(profile) shows who asks)")
    }

    /// How many times the runtime's conformance walk called its per-record callback, from a callgrind
    /// file's call lines (function names are compressed: "(id) name" once, then "(id)").
    private func conformanceRecordVisits(callgrindFile path: String) throws -> Int {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var names: [Substring: Substring] = [:]
        var calleeIsTheCallback = false
        var visits = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("cfn=") || line.hasPrefix("fn=") {
                let value = line.drop { $0 != "=" }.dropFirst()
                var name = value
                if value.hasPrefix("("), let close = value.firstIndex(of: ")") {
                    let id = value[...close]
                    let rest = value[value.index(after: close)...].drop { $0 == " " }
                    if rest.isEmpty { name = names[id] ?? "" } else { names[id] = rest; name = rest }
                }
                if line.hasPrefix("cfn=") {
                    calleeIsTheCallback = name.contains("swift_conformsToProtocolMaybeInstantiateSuperclasses")
                        && name.contains("lambda(swift::TargetProtocolConformanceDescriptor")
                }
            } else if line.hasPrefix("calls="), calleeIsTheCallback {
                visits += Int(line.dropFirst(6).prefix { $0.isNumber }) ?? 0
                calleeIsTheCallback = false
            }
        }
        return visits
    }

    /// `make TARGET DESTDIR=stage PREFIX=/usr/local` for real, from the Makefile's one list, with
    /// stand-ins for the release build (StagedInstall): the Python backend lands where install puts it.
    private func runMakeLines(_ target: String, stage: String) throws -> Int32 {
        let staged = try StagedInstall()
        defer { staged.remove() }
        let run = try staged.make([target, "DESTDIR=\(stage)"], prefix: "/usr/local")
        XCTAssertEqual(run.status, 0, run.summary)
        return run.status
    }
}
