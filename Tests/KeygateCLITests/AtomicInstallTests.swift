// `make install` replaces programs as dpkg does (scripts/install-atomic: written beside the
// target, then renamed over it), so a program that starts the gatekeeper, or any Keygate
// binary, while an upgrade runs finds the old file or the new one, never none and never half
// of one. Proved by reading the target without pause while it is replaced again and again, and
// by checking that every program and library `make install` writes goes through the script.
import Foundation
import KeygateTestSupport
import XCTest

final class AtomicInstallTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "keygate-install-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func test_replacingAProgram_neverLeavesItMissingOrHalfWritten() throws {
        let versions = [Data(repeating: UInt8(ascii: "a"), count: 4 << 20), Data(repeating: UInt8(ascii: "b"), count: 4 << 20)]
        let sources = versions.indices.map { folder + "/source-\($0)" }
        for (path, bytes) in zip(sources, versions) { XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: bytes)) }
        let target = folder + "/libexec/keygate/keygate-gatekeeper"
        let script = PackagePaths.scripts + "/install-atomic"
        XCTAssertEqual(try Subprocess.run([script, "0755", sources[0], target]).status, 0, "the first install creates the folders")

        let reader = TargetReader(path: target, versions: versions)
        reader.start()
        for round in 1...30 {
            let result = try Subprocess.run([script, "4755", sources[round % 2], target])
            XCTAssertEqual(result.status, 0, result.err)
        }
        let (reads, missing, torn) = reader.stop()
        XCTAssertGreaterThan(reads, 30, "the reader kept reading while the file was replaced")
        XCTAssertEqual(missing, 0, "the target was never missing")
        XCTAssertEqual(torn, 0, "the target was never half written")
        XCTAssertEqual(FileManager.default.contents(atPath: target), versions[0], "the last install won")
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: target)[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o4755)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder + "/libexec/keygate"), ["keygate-gatekeeper"],
                       "nothing staged is left beside it")
    }

    func test_makeInstall_writesEveryProgramAndLibrary_throughTheScript() throws {
        // A real staged install (stand-ins for the release build) whose INSTALL_ATOMIC logs each
        // target it is given, then runs the real script.
        let log = folder + "/atomic.log"
        let wrapper = folder + "/install-atomic"
        try """
            #!/bin/sh
            printf '%s\\n' "$3" >> '\(log)'
            exec '\(PackagePaths.root)/scripts/install-atomic' "$@"
            """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(wrapper, 0o755), 0)
        let staged = try StagedInstall()
        defer { staged.remove() }
        let result = try staged.make(["install", "DESTDIR=" + folder + "/stage", "INSTALL_ATOMIC=" + wrapper])
        XCTAssertEqual(result.status, 0, result.err)
        let written = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        let helpers = try FileManager.default.contentsOfDirectory(atPath: PackagePaths.root + "/contrib/helpers")
        XCTAssertFalse(helpers.isEmpty)
        for program in ["/usr/bin/keygate", "/usr/libexec/keygate/keygate-gatekeeper", "/usr/libexec/keygate/keygate-pam-helper",
                        "/usr/lib/x86_64-linux-gnu/security/pam_keygate.so", "/usr/libexec/keygate/keygate-keyring-unlock",
                        "/usr/libexec/keygate/secret-session"] + helpers.map({ "/usr/bin/" + $0 }) {
            XCTAssertTrue(written.contains(folder + "/stage" + program), "\(program) is installed in place, not through the script: \(written)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: folder + "/stage" + program), "\(program) was installed")
        }
    }
}

/// Reads a file over and over on a thread of its own, counting reads that found no file and
/// reads whose bytes were neither version whole.
private final class TargetReader: @unchecked Sendable {
    private let path: String
    private let versions: [Data]
    private let lock = NSLock()
    private var running = true
    private var counts = (reads: 0, missing: 0, torn: 0)
    private let done = DispatchSemaphore(value: 0)

    init(path: String, versions: [Data]) {
        self.path = path
        self.versions = versions
    }

    func start() {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                let fd = open(path, O_RDONLY)
                guard fd >= 0 else {
                    lock.withLock { counts.reads += 1; counts.missing += 1 }
                    continue
                }
                let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
                let bytes = (try? handle.readToEnd()) ?? Data()
                let whole = versions.contains(bytes)
                lock.withLock { counts.reads += 1; if !whole { counts.torn += 1 } }
            }
            done.signal()
        }
    }

    func stop() -> (Int, Int, Int) {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { (counts.reads, counts.missing, counts.torn) }
    }
}
