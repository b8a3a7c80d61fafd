// The Makefile's INSTALL_LIST is the one list of what Keygate installs: `make
// install` installs exactly its files, `make uninstall` removes exactly them, and
// scripts/make-deb stages the package with `make install` instead of a list of its own.
// The install runs for real, into a temporary DESTDIR, with stand-ins for the release build
// (install's prerequisites taken as made, `-o build -o pam -o man`); scripts/check-deb checks
// the built .deb against the same list.
import Foundation
import KeygateTestSupport
import XCTest

final class InstallListTests: XCTestCase {
    private var work = ""

    override func setUpWithError() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/make"), "make")
        work = NSTemporaryDirectory() + "keygate-install-list-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: work)
    }

    /// `make VARIABLES... TARGETS...` in the source tree, with stand-in build outputs.
    private func make(_ arguments: [String]) throws -> ProcessResult {
        let staged = try StagedInstall()
        defer { staged.remove() }
        return try staged.make(arguments)
    }

    private static func describe(_ result: ProcessResult) -> String {
        "exit \(result.status)\nstdout: \(result.out)\nstderr: \(result.err)"
    }

    /// Every file under `root`, as paths from it.
    private func files(under root: String) -> Set<String> {
        var found: Set<String> = []
        let walker = FileManager.default.enumerator(atPath: root)
        while let path = walker?.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isFolder), !isFolder.boolValue {
                found.insert("/" + path)
            }
        }
        return found
    }

    func test_installInstallsExactlyTheList_andUninstallRemovesExactlyIt() throws {
        let listed = try make(["install-list", "DESTDIR="])
        XCTAssertEqual(listed.status, 0, Self.describe(listed))
        let lines = listed.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, Set(lines).count, "a file is listed twice: \(lines)")
        for expected in ["/usr/bin/keygate", "/usr/libexec/keygate/keygate-gatekeeper", "/etc/pam.d/keygate",
                         "/usr/lib/x86_64-linux-gnu/security/pam_keygate.so", "/usr/share/man/man1/keygate.1",
                         "/usr/lib/systemd/system/keygate-gatekeeper.socket", "/usr/share/pam-configs/keygate"] {
            XCTAssertTrue(lines.contains(expected), "\(expected) is not in make install-list: \(lines)")
        }

        let root = work + "/root"
        let installed = try make(["install", "DESTDIR=" + root])
        XCTAssertEqual(installed.status, 0, Self.describe(installed))
        XCTAssertEqual(files(under: root), Set(lines), "make install installs the list, no more and no less")
        let gatekeeper = try FileManager.default.attributesOfItem(atPath: root + "/usr/libexec/keygate/keygate-gatekeeper")
        XCTAssertEqual((gatekeeper[.posixPermissions] as? NSNumber)?.intValue, 0o4755, "the gatekeeper is setuid")
        let unit = try String(contentsOfFile: root + "/usr/lib/systemd/system/keygate-gatekeeper.service", encoding: .utf8)
        XCTAssertTrue(unit.contains("ExecStart=/usr/libexec/keygate/keygate-gatekeeper --serve"), unit)

        let removed = try make(["uninstall", "DESTDIR=" + root])
        XCTAssertEqual(removed.status, 0, Self.describe(removed))
        XCTAssertEqual(files(under: root), [], "make uninstall removes every file make install wrote")
    }

    /// scripts/make-deb stages the package through `make install` and names none of the
    /// installed sources itself, so a file added to the list is packaged without a second edit.
    func test_makeDeb_stagesThroughMakeInstall_withNoListOfItsOwn() throws {
        let script = try String(contentsOfFile: PackagePaths.scripts + "/make-deb", encoding: .utf8)
        XCTAssertTrue(script.contains("install DESTDIR=\"$abs_stage\" PREFIX=/usr"), "make-deb no longer stages with make install")
        for source in ["contrib/helpers", "completions/", "pam.d/", "policies/", "contrib/systemd", "scripts/secret-session", "\"$BUILD_OUT\"/man/"] {
            let lines = script.split(separator: "\n").filter { !$0.hasPrefix("#") && $0.contains(source) }
            XCTAssertEqual(lines, [], "make-deb installs \(source) itself; add it to the Makefile's INSTALL_LIST instead")
        }
    }
}
