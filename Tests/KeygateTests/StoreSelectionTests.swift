// Which store a keychain uses: KEYGATE_STORE, keygate.conf (strict parser, root-owned
// system file), and `auto` (recorded choice, an existing embedded store, no session bus
// decided at once with no D-Bus call). No Secret Service is needed: every case here is
// decided before libsecret would be asked.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class StoreSelectionTests: XCTestCase {
    private var root = ""
    private var data: String { root + "/data/keygate" }

    override func setUpWithError() throws {
        root = try makeTemporaryFolder(self)
        try FileManager.default.createDirectory(atPath: root + "/home", withIntermediateDirectories: true)
    }

    /// An environment with no session bus and no config files of the caller's.
    private func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ["HOME": root + "/home", "XDG_CONFIG_HOME": root + "/config"]
        env.merge(extra) { _, new in new }
        return env
    }

    private func choose(_ env: [String: String]) throws -> (kind: String, reason: String, store: any ItemStore, record: StoreSelection?) {
        let selection = try StoreSelection.resolve(environment: KeygateEnvironment(env), dataDirectory: data, home: root + "/home",
                                                   deadline: .seconds(5))
        return (selection.kind.rawValue, selection.reason, selection.store(deadline: .seconds(5), unlockPrompt: .never, environment: .process()),
                selection.needsRecord ? selection : nil)
    }

    private func writeUserConfig(_ text: String) throws -> String {
        let folder = root + "/config/keygate"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try text.write(toFile: folder + "/keygate.conf", atomically: true, encoding: .utf8)
        return folder + "/keygate.conf"
    }

    private func assertParam(_ body: () throws -> Void, contains text: String, line: UInt = #line) {
        do {
            try body()
            XCTFail("expected errSecParam", line: line)
        } catch let error as KeychainError {
            XCTAssertEqual(error.code, .param, error.message, line: line)
            XCTAssertTrue(error.message.contains(text), error.message, line: line)
        } catch {
            XCTFail("\(error)", line: line)
        }
    }

    // MARK: explicit choices

    func test_environment_choosesTheStore_andSaysSo() throws {
        let ss = try choose(environment(["KEYGATE_STORE": "secret-service"]))
        let embedded = try choose(environment(["KEYGATE_STORE": "embedded"]))

        XCTAssertEqual(ss.kind, "secret-service")
        XCTAssertTrue(ss.store is SecretServiceStore)
        XCTAssertEqual(embedded.kind, "embedded")
        XCTAssertTrue(embedded.store is EmbeddedStore)
        XCTAssertEqual(embedded.reason, "chosen by KEYGATE_STORE=embedded")
        XCTAssertFalse(FileManager.default.fileExists(atPath: data + "/store"), "an explicit choice is not recorded")
    }

    func test_environment_withAnUnknownStore_isErrSecParam_namingIt() {
        assertParam({ _ = try self.choose(self.environment(["KEYGATE_STORE": "sqlite"])) }, contains: "KEYGATE_STORE=sqlite")
    }

    func test_userConfig_choosesTheStore_andTheEnvironmentWinsOverIt() throws {
        let file = try writeUserConfig("# the store\n\n  store =  embedded  \n")

        XCTAssertEqual(try choose(environment()).reason, "chosen by \(file)")
        XCTAssertEqual(try choose(environment()).kind, "embedded")
        XCTAssertEqual(try choose(environment(["KEYGATE_STORE": "secret-service"])).kind, "secret-service")
    }

    func test_config_refusesUnknownSettingsAndValues_namingFileAndLine() throws {
        XCTAssertThrowsError(try StoreConfig.parse("store = embedded\ncolour = blue\n", file: "f.conf")) { error in
            XCTAssertTrue((error as? KeychainError)?.message.contains("f.conf:2: unknown setting \"colour\"") == true, "\(error)")
        }
        XCTAssertThrowsError(try StoreConfig.parse("store = embeded\n", file: "f.conf")) { error in
            XCTAssertTrue((error as? KeychainError)?.message.contains("f.conf:1: store = \"embeded\"") == true, "\(error)")
        }
        XCTAssertThrowsError(try StoreConfig.parse("store embedded\n", file: "f.conf"))
        XCTAssertEqual(try StoreConfig.parse("store = auto\nstore = secret-service\n", file: "f"), .fixed(.secretService))
        XCTAssertNil(try StoreConfig.parse("# nothing\n\n", file: "f"))
    }

    /// keygate.conf is read with the line syntax policy files have (ConfigSyntax): the same
    /// comments, byte-order mark, CR LF and refusals of what is not plain text, with columns.
    func test_config_sharesThePolicyFilesLineSyntax() throws {
        XCTAssertEqual(try StoreConfig.parse("\u{FEFF}; a comment\r\n  store\t=  embedded  \r\n", file: "f"), .fixed(.embedded))
        for (text, expected) in [("store = auto\n[default]\n", "f:2: keygate.conf has no [sections]"),
                                 ("store = a\u{1}uto\n", "f:1:10: unexpected control character (byte 0x1): keygate.conf is plain text"),
                                 ("store\n", "f:1:6: expected `= VALUE` after the key \"store\""),
                                 ("= embedded\n", "f:1:1: expected a key")] {
            XCTAssertThrowsError(try StoreConfig.parse(text, file: "f")) { error in
                XCTAssertTrue((error as? KeychainError)?.message.hasPrefix(expected) == true, "\(text.debugDescription): \(error)")
            }
        }
        // The policy parser reads the same lines the same way.
        XCTAssertEqual(ConfigSyntax.classify(Array("  lock-after = 300 ".utf8), fileKind: "x"),
                       .setting(key: "lock-after", keyColumn: 3, value: "300", valueColumn: 16))
        XCTAssertEqual(PolicyParser.parse("[default]\nlock-after\n", file: "p").errors.first?.message,
                       "expected `= VALUE` after the key \"lock-after\"")
    }

    func test_systemConfig_isRefused_whenGroupOrOthersCanWriteIt() throws {
        let path = root + "/system.conf"
        try "store = embedded\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(path, 0o664), 0)

        if geteuid() == 0 {
            assertParam({ _ = try StoreConfig.read(path, requireRootOwned: true) }, contains: "owned by root and not writable by group")
            XCTAssertEqual(chmod(path, 0o644), 0)
            XCTAssertEqual(try StoreConfig.read(path, requireRootOwned: true), .fixed(.embedded))
        } else {
            XCTAssertEqual(chmod(path, 0o644), 0)
            assertParam({ _ = try StoreConfig.read(path, requireRootOwned: true) }, contains: "owned by root")
        }
        XCTAssertNil(try StoreConfig.read(root + "/absent.conf", requireRootOwned: true))
    }

    func test_systemConfig_isRefused_throughASymbolicLink_butTheUsersOwnMayBeOne() throws {
        let real = root + "/real.conf"
        try "store = embedded\n".write(toFile: real, atomically: true, encoding: .utf8)
        let link = root + "/link.conf"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)

        assertParam({ _ = try StoreConfig.read(link, requireRootOwned: true) }, contains: "not a link")
        XCTAssertEqual(try StoreConfig.read(link, requireRootOwned: false), .fixed(.embedded))
    }

    // MARK: auto

    func test_auto_withNoSessionBus_choosesEmbeddedAtOnce_andRecordsIt_onlyWhenAWriteCommits() throws {
        let started = ContinuousClock.now
        let chosen = try choose(environment(["XDG_RUNTIME_DIR": root + "/no-runtime"]))
        let elapsed = ContinuousClock.now - started

        XCTAssertEqual(chosen.kind, "embedded")
        XCTAssertTrue(chosen.reason.contains("no D-Bus session bus"), chosen.reason)
        XCTAssertLessThan(elapsed, .milliseconds(200), "no waiting for a bus")
        XCTAssertNil(StoreSelection.recorded(in: data), "deciding writes nothing: a read-only command changes no state")
        XCTAssertFalse(FileManager.default.fileExists(atPath: data), "not even the data folder")
        try XCTUnwrap(chosen.record).commitRecord()
        XCTAssertEqual(StoreSelection.recorded(in: data), .embedded)
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: data + "/store")[.posixPermissions] as? Int)
        XCTAssertEqual(mode, 0o600)
    }

    func test_auto_followsTheRecordedStore_withoutAskingTheBus() throws {
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        try StoreSelection.record(.secretService, in: data)

        // A bus address that would hang or fail if it were asked.
        let chosen = try choose(environment(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/kg-bus"]))

        XCTAssertEqual(chosen.kind, "secret-service")
        XCTAssertTrue(chosen.reason.contains("recorded in \(data)/store"), chosen.reason)
        XCTAssertNil(chosen.record, "already recorded: nothing to write")
    }

    func test_auto_choosesEmbedded_whenItsDatabaseExists_evenWithABus() throws {
        try EmbeddedStore(directory: data).create(ItemAttributes(identity: .generic(service: "s", account: "a")),
                                                  blob: [1], replace: false)

        let chosen = try choose(environment(["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/kg-bus"]))

        XCTAssertEqual(chosen.kind, "embedded")
        XCTAssertNil(StoreSelection.recorded(in: data))
        XCTAssertEqual(chosen.record?.kind, .embedded)
    }

    func test_auto_fromConfig_isStillAuto() throws {
        _ = try writeUserConfig("store = auto\n")

        let chosen = try choose(environment())

        XCTAssertEqual(chosen.kind, "embedded")
        XCTAssertTrue(chosen.reason.hasPrefix("auto (\(root)/config/keygate/keygate.conf)"), chosen.reason)
    }
}
