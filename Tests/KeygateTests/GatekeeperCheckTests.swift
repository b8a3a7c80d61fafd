// doctor's gatekeeper check (Diagnostics/GatekeeperCheck.swift) against real files in a
// fresh folder under /tmp, chmod- and chown-ed as root: missing, not executable, not setuid,
// not root's, group- or world-writable, in a folder others can change, a link; OK otherwise.
import Foundation
import KeygateTestSupport
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class GatekeeperCheckTests: XCTestCase {
    private var dir = ""
    private var gatekeeper: String { dir + "/keygate-gatekeeper" }

    override func setUpWithError() throws {
        var template = Array("/tmp/keygate-gatekeeper-check.XXXXXX".utf8CString)
        dir = try XCTUnwrap(template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } })
        XCTAssertEqual(chmod(dir, 0o755), 0)
    }

    override func tearDownWithError() throws {
        _ = chmod(dir, 0o700)
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// A small executable file of `mode`, owned by `uid` (chown first: it clears the setuid bit).
    private func makeGatekeeper(mode: mode_t, uid: uid_t = 0, at path: String? = nil) throws {
        let path = path ?? gatekeeper
        try "#!/bin/sh\nexit 2\n".write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertEqual(chown(path, uid, 0), 0, "chown \(path)")
        XCTAssertEqual(chmod(path, mode), 0, "chmod \(path)")
    }

    private func requireRoot() throws {
        try Requirement.require(Requirement.isRoot, "root, to chown a file to root and to another uid")
    }

    func test_fails_whenNotInstalled_namingWhereItLooked_andHowToInstall() {
        let result = GatekeeperCheck.run(candidates: [dir + "/a/keygate-gatekeeper", gatekeeper])
        XCTAssertEqual(result.check, "gatekeeper")
        XCTAssertEqual(result.level, .fail, "no item with access control can work without it")
        XCTAssertTrue(result.detail.contains("is not installed"), result.detail)
        XCTAssertTrue(result.detail.contains(dir + "/a/keygate-gatekeeper") && result.detail.contains(gatekeeper), result.detail)
        XCTAssertTrue(result.advice.contains("sudo make install") && result.advice.contains("keygate package"), result.advice)
    }

    func test_ok_forARootSetuidFile_namingItsPath() throws {
        try requireRoot()
        try makeGatekeeper(mode: 0o4755)
        let result = GatekeeperCheck.run(candidates: [dir + "/absent", gatekeeper])
        XCTAssertEqual(result.level, .ok, result.detail)
        XCTAssertEqual(result.detail, "\(gatekeeper), root, mode 04755 (setuid)")
        XCTAssertEqual(result.advice, "")
    }

    func test_checksTheFirstExecutableCandidate_asTheLocatorRunsIt() throws {
        try requireRoot()
        let first = dir + "/first"
        try makeGatekeeper(mode: 0o755, at: first)
        try makeGatekeeper(mode: 0o4755)
        let result = GatekeeperCheck.run(candidates: [first, gatekeeper])
        XCTAssertEqual(result.level, .warn, "the first one is not setuid: \(result.detail)")
        XCTAssertTrue(result.detail.hasPrefix(first + " "), result.detail)
    }

    func test_warns_whenNotSetuid_withTheChmod() throws {
        try requireRoot()
        try makeGatekeeper(mode: 0o755)
        let result = GatekeeperCheck.run(candidates: [gatekeeper])
        XCTAssertEqual(result.level, .warn)
        XCTAssertTrue(result.detail.contains("is not setuid") && result.detail.contains("0755"), result.detail)
        XCTAssertEqual(result.advice, "sudo chmod 4755 \(gatekeeper)")
    }

    func test_warns_whenNotOwnedByRoot_withTheChownThenChmod() throws {
        try requireRoot()
        try makeGatekeeper(mode: 0o4755, uid: 65534)
        let result = GatekeeperCheck.run(candidates: [gatekeeper])
        XCTAssertEqual(result.level, .warn)
        XCTAssertTrue(result.detail.contains("owned by uid 65534, not root"), result.detail)
        XCTAssertTrue(result.advice.hasPrefix("sudo chown root:root \(gatekeeper) && sudo chmod 4755 \(gatekeeper)"), result.advice)
    }

    func test_fails_whenGroupOrOthersCanWriteIt() throws {
        try requireRoot()
        for mode: mode_t in [0o4775, 0o4757, 0o0777] {
            try makeGatekeeper(mode: mode)
            let result = GatekeeperCheck.run(candidates: [gatekeeper])
            XCTAssertEqual(result.level, .fail, "mode \(String(mode, radix: 8)): \(result.detail)")
            XCTAssertTrue(result.detail.contains("writable by its group or by everyone"), result.detail)
            XCTAssertTrue(result.advice.contains("sudo chmod go-w \(gatekeeper)") && result.advice.contains("reinstall"), result.advice)
        }
    }

    func test_fails_whenItsFolderIsWritableByOthers_orNotRoots() throws {
        try requireRoot()
        try makeGatekeeper(mode: 0o4755)
        XCTAssertEqual(chmod(dir, 0o777), 0)
        let writable = GatekeeperCheck.run(candidates: [gatekeeper])
        XCTAssertEqual(writable.level, .fail, writable.detail)
        XCTAssertTrue(writable.detail.hasPrefix("\(dir), a folder above \(gatekeeper), is writable by its group or by everyone"), writable.detail)
        XCTAssertTrue(writable.advice.contains("sudo chmod go-w \(dir)"), writable.advice)

        XCTAssertEqual(chmod(dir, 0o755), 0)
        XCTAssertEqual(chown(dir, 65534, 0), 0)
        let foreign = GatekeeperCheck.run(candidates: [gatekeeper])
        XCTAssertEqual(foreign.level, .fail, foreign.detail)
        XCTAssertTrue(foreign.detail.contains("\(dir), a folder above \(gatekeeper), is owned by uid 65534"), foreign.detail)
        XCTAssertTrue(foreign.advice.contains("sudo chown root:root \(dir)"), foreign.advice)

        // A sticky folder such as /tmp (others cannot rename root's entries) is not a finding.
        XCTAssertEqual(chown(dir, 0, 0), 0)
        XCTAssertEqual(chmod(dir, 0o1777), 0)
        XCTAssertEqual(GatekeeperCheck.run(candidates: [gatekeeper]).level, .ok)
    }

    func test_followsALink_andChecksTheFileItPointsAt() throws {
        try requireRoot()
        let real = dir + "/real"
        XCTAssertEqual(mkdir(real, 0o700), 0)
        XCTAssertEqual(chmod(real, 0o777), 0)
        try makeGatekeeper(mode: 0o4755, at: real + "/keygate-gatekeeper")
        XCTAssertEqual(symlink(real + "/keygate-gatekeeper", gatekeeper), 0)
        let result = GatekeeperCheck.run(candidates: [gatekeeper])
        XCTAssertEqual(result.level, .fail, "the link's target sits in a world-writable folder: \(result.detail)")
        XCTAssertTrue(result.detail.contains("\(real), a folder above \(gatekeeper) (-> \(real)/keygate-gatekeeper)"), result.detail)
    }

    func test_fails_whenPresentButNotExecutable() throws {
        try requireRoot()
        try makeGatekeeper(mode: 0o644)
        let result = GatekeeperCheck.run(candidates: [gatekeeper])
        XCTAssertEqual(result.level, .fail)
        XCTAssertTrue(result.detail.contains("\(gatekeeper) is there but is not an executable file"), result.detail)
        XCTAssertTrue(result.advice.contains("sudo chmod 4755 \(gatekeeper)"), result.advice)
    }
}
