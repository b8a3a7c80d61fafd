// A read of an item read before sends the item's reads with its search (SecretServiceStore,
// ServiceCalls.items): these tests hold that such a read never returns what was true before,
// with a real gnome-keyring alone on a private bus (ProviderSession) and real other processes
// changing the item between two reads of one reader: secret-tool, the built `keygate`, gdbus
// locking the collection, and gnome-keyring itself killed and started again. The reader is this
// process's SecretServiceStore on one connection, as an application's library reads are.
import Foundation
import XCTest
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class ReadAheadFreshnessTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus

    private var session: ProviderSession?
    private let tag = "kg-ahead-\(UUID().uuidString.prefix(8))"

    override func setUpWithError() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/secret-tool"), "secret-tool (libsecret-tools)")
        session = try ProviderSession(.gnomeKeyring)
    }

    override func tearDown() {
        session?.stop()
        session = nil
        super.tearDown()
    }

    private func provider() throws -> ProviderSession { try XCTUnwrap(session) }

    /// One reader: a store on its own connection, as an application's library reads are.
    private func reader(unlockPrompt: UnlockPromptSetting = .auto) throws -> (SecretServiceStore, SecretServiceConnection) {
        let connection = SecretServiceConnection(address: try provider().address, environment: .process())
        let store = SecretServiceStore(deadline: .seconds(5), connection: connection, unlockPrompt: unlockPrompt)
        XCTAssertEqual(store.provider(), .gnomeKeyring)
        return (store, connection)
    }

    private func identity(_ account: String) -> ItemIdentity { .generic(service: tag, account: account) }

    private func read(_ store: SecretServiceStore, _ account: String) throws -> [[UInt8]] {
        try store.search(ItemQuery(exactly: identity(account)), loadBlobs: true).map { $0.blob ?? [] }
    }

    /// Reads twice (the second read carries the item's reads), so that what the search found is remembered.
    private func readTwice(_ store: SecretServiceStore, _ account: String, expecting blob: [UInt8]) throws {
        XCTAssertEqual(try read(store, account), [blob])
        XCTAssertEqual(try read(store, account), [blob])
    }

    /// The item's attributes as gnome-keyring holds them, and its path.
    private func stored(_ account: String, on connection: SecretServiceConnection) throws -> (path: String, attributes: [String: String]) {
        let search = ServiceMethodCall(path: SecretServiceConnection.servicePath, interface: SecretServiceConnection.serviceInterface,
                                       method: "SearchItems",
                                       arguments: Variant.tuple([Variant.stringDictionary(["service": tag, "account": account])]),
                                       replyType: "(aoao)", action: "search for items")
        let paths = try XCTUnwrap(connection.calls([search], ServiceDeadline(.seconds(5))).first).get().child(0)?.strings ?? []
        let path = try XCTUnwrap(paths.first, "no item \(account)")
        XCTAssertEqual(paths.count, 1)
        let get = ServiceMethodCall(path: path, interface: SecretServiceConnection.propertiesInterface, method: "Get",
                                    arguments: Variant.tuple([Variant.string(SecretServiceConnection.itemInterface),
                                                              Variant.string("Attributes")]),
                                    replyType: "(v)", action: "read an item property")
        let reply = try XCTUnwrap(connection.calls([get], ServiceDeadline(.seconds(5))).first).get()
        return (path, try XCTUnwrap(reply.child(0)?.unboxed).stringDictionary)
    }

    /// secret-tool, another process, stores `secret` under exactly `attributes`: gnome-keyring
    /// replaces the secret of the item that has them, at the same path, or makes a new item.
    private func secretToolStore(_ attributes: [String: String], _ secret: String) throws {
        let pairs = attributes.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
        let stored = try Subprocess.run(["secret-tool", "store", "--label", "by secret-tool"] + pairs, stdin: Data(secret.utf8),
                                        environment: try provider().environment, timeout: 20)
        XCTAssertEqual(stored.status, 0, stored.err)
    }

    private func secretToolClear(_ account: String) throws {
        let cleared = try Subprocess.run(["secret-tool", "clear", "service", tag, "account", account],
                                         environment: try provider().environment, timeout: 20)
        XCTAssertEqual(cleared.status, 0, cleared.err)
    }

    /// What a reader that remembers nothing (a new connection) reads: the answer every read must give.
    private func fresh(_ account: String) throws -> [[UInt8]] {
        try read(try reader().0, account)
    }

    /// The built `keygate`, a second Keygate process, on the same provider, in a throwaway
    /// keychain for root (RootKeychainSandbox: its own HOME, the fast KDF, an askpass).
    private func keygate(_ sandbox: RootKeychainSandbox, _ arguments: [String], stdin: String? = nil) throws -> ProcessResult {
        var env = sandbox.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = try provider().address
        env["KEYGATE_STORE"] = "secret-service"
        env.removeValue(forKey: "DISPLAY")
        return try Subprocess.run([PackagePaths.keygateBinary] + arguments, stdin: stdin.map { Data($0.utf8) }, environment: env,
                                  timeout: 60)
    }

    // MARK: - changed, replaced, deleted by another process

    /// secret-tool changes the secret in place (the same path, so the guess is right and the
    /// read takes one wait): the read returns the new secret, never the one read before.
    func test_aSecretChangedInPlaceBySecretTool_isReadNew_inTheOneWait() throws {
        let (store, connection) = try reader()
        try store.create(ItemAttributes(identity: identity("a"), label: "a"), blob: Array("old".utf8), replace: false)
        try readTwice(store, "a", expecting: Array("old".utf8))
        let before = try stored("a", on: connection)

        try secretToolStore(before.attributes, "new")
        XCTAssertEqual(try stored("a", on: connection).path, before.path, "gnome-keyring replaced the secret in place")
        let waits = connection.waits.load(ordering: .relaxed)

        XCTAssertEqual(try read(store, "a"), [Array("new".utf8)])
        XCTAssertEqual(connection.waits.load(ordering: .relaxed) - waits, 1, "the read carried the item's reads")
    }

    /// `keygate add -U` in another Keygate process, three times: each next read returns what a
    /// reader that remembers nothing returns, a blob other than the one before, and `keygate get`
    /// shows the last secret.
    func test_aSecretChangedByAnotherKeygateProcess_isReadAsAFreshReaderReadsIt() throws {
        let sandbox = try RootKeychainSandbox(prefix: "keygate-ahead")
        defer { sandbox.remove() }
        let added = try keygate(sandbox, ["add", "-s", tag, "-a", "k"], stdin: "first")
        XCTAssertEqual(added.status, 0, added.err)
        let (store, _) = try reader()
        var last = try fresh("k")
        XCTAssertEqual(last.count, 1)
        try readTwice(store, "k", expecting: last.first ?? [])

        for round in 1...3 {
            let updated = try keygate(sandbox, ["add", "-U", "-s", tag, "-a", "k"], stdin: "second \(round)")
            XCTAssertEqual(updated.status, 0, updated.err)
            let now = try read(store, "k")
            XCTAssertEqual(now, try fresh("k"), "round \(round)")
            XCTAssertNotEqual(now, last, "round \(round): the blob read before")
            last = now
        }
        let shown = try keygate(sandbox, ["get", "-s", tag, "-a", "k"])
        XCTAssertEqual(shown.out, "second 3", shown.err)
    }

    /// Deleted, then made again with the very same attributes by other processes (a new item at
    /// a new path): the read returns the new item's secret.
    func test_anItemDeletedAndMadeAgainWithTheSameAttributes_isTheNewItem() throws {
        let (store, connection) = try reader()
        try store.create(ItemAttributes(identity: identity("b"), label: "b"), blob: Array("old".utf8), replace: false)
        try readTwice(store, "b", expecting: Array("old".utf8))
        let before = try stored("b", on: connection)

        try secretToolClear("b")
        try secretToolStore(before.attributes, "remade")
        XCTAssertNotEqual(try stored("b", on: connection).path, before.path)

        XCTAssertEqual(try read(store, "b"), [Array("remade".utf8)])
        XCTAssertEqual(try read(store, "b"), [Array("remade".utf8)])
    }

    /// Deleted by another process: nothing is found, as the search says.
    func test_anItemDeletedBySecretTool_isNotFound() throws {
        let (store, _) = try reader()
        try store.create(ItemAttributes(identity: identity("c"), label: "c"), blob: Array("gone".utf8), replace: false)
        try readTwice(store, "c", expecting: Array("gone".utf8))

        try secretToolClear("c")

        XCTAssertEqual(try read(store, "c"), [])
    }

    /// A second item with the same identity appears (another process; one attribute more, so
    /// a new item): the guess (one item) is wrong, and the read answers as a reader that
    /// remembers nothing does.
    func test_aSecondItemWithTheSameIdentity_isReadAsAFreshReaderReadsIt() throws {
        let (store, connection) = try reader()
        try store.create(ItemAttributes(identity: identity("d"), label: "d"), blob: Array("one".utf8), replace: false)
        try readTwice(store, "d", expecting: Array("one".utf8))
        var attributes = try stored("d", on: connection).attributes
        attributes["extra"] = "x"

        try secretToolStore(attributes, "two")

        let expected = try fresh("d")
        XCTAssertEqual(expected.count, 1)
        XCTAssertEqual(try read(store, "d"), expected)
    }

    // MARK: - locked, restarted

    /// Another process (gdbus) locks the collection: the read is refused as locked, never
    /// answered with the secret read before.
    func test_afterAnotherProcessLocksTheCollection_theReadIsRefused_notAnsweredFromBefore() throws {
        let (store, _) = try reader(unlockPrompt: .never)
        try store.create(ItemAttributes(identity: identity("e"), label: "e"), blob: Array("held".utf8), replace: false)
        try readTwice(store, "e", expecting: Array("held".utf8))

        try provider().lockDefaultCollection()

        do {
            let found = try read(store, "e")
            XCTFail("a locked collection was read: \(found)")
        } catch let error as KeychainError {
            XCTAssertEqual(error.reason, .lockedCollection, error.message)
        }
    }

    /// gnome-keyring killed and started again (the same keyring file): the reader's session is
    /// gone, the paths may be the same. A secret changed before the kill is read new; an item
    /// cleared before the kill and made again after it (its path may be reused) is the new one.
    func test_acrossAGnomeKeyringRestart_theReadIsOfTheItemsAsTheyAreNow() throws {
        let (store, connection) = try reader()
        try store.create(ItemAttributes(identity: identity("f"), label: "f"), blob: Array("v1".utf8), replace: false)
        try store.create(ItemAttributes(identity: identity("g"), label: "g"), blob: Array("g1".utf8), replace: false)
        try readTwice(store, "f", expecting: Array("v1".utf8))
        try readTwice(store, "g", expecting: Array("g1".utf8))
        let f = try stored("f", on: connection).attributes
        let g = try stored("g", on: connection).attributes

        try secretToolStore(f, "v2")
        try secretToolClear("g")
        try provider().killProvider()
        try provider().restart()
        try secretToolStore(g, "g2")

        XCTAssertEqual(try read(store, "f"), [Array("v2".utf8)])
        XCTAssertEqual(try read(store, "g"), [Array("g2".utf8)])
        try secretToolStore(f, "v3")
        XCTAssertEqual(try read(store, "f"), [Array("v3".utf8)])
    }

    // MARK: - a writer racing the reader

    /// secret-tool writes 1, 2, ... 40 in turn (in place: the reader's guess stays right) while
    /// this process reads as fast as it can. Each read returns a value no older than the one
    /// before it, and the read after the writer ended returns the last: a read that answered from
    /// an earlier state would go backwards or end short.
    func test_readsRacingAWriter_neverGoBackwards_andEndOnTheLastWrite() throws {
        let (store, connection) = try reader()
        try store.create(ItemAttributes(identity: identity("h"), label: "h"), blob: Array("0".utf8), replace: false)
        try readTwice(store, "h", expecting: Array("0".utf8))
        let attributes = try stored("h", on: connection).attributes
        let pairs = attributes.sorted { $0.key < $1.key }.map { "'\($0.key)' '\($0.value)'" }.joined(separator: " ")
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "for i in $(seq 1 40); do printf %s $i | secret-tool store --label h \(pairs) || exit 1; done"]
        writer.environment = try provider().environment
        let waitsBefore = connection.waits.load(ordering: .relaxed)
        try writer.run()

        var seen: [Int] = []
        while writer.isRunning {
            let blobs = try read(store, "h")
            XCTAssertEqual(blobs.count, 1)
            seen.append(Int(String(decoding: blobs.first ?? [], as: UTF8.self)) ?? -1)
        }
        writer.waitUntilExit()
        XCTAssertEqual(writer.terminationStatus, 0)
        let reads = seen.count

        XCTAssertEqual(try read(store, "h"), [Array("40".utf8)])
        XCTAssertFalse(seen.contains(-1), "\(seen)")
        XCTAssertEqual(seen, seen.sorted(), "a read went backwards: \(seen)")
        XCTAssertGreaterThan(reads, 10, "the reader raced the writer")
        XCTAssertLessThan(connection.waits.load(ordering: .relaxed) - waitsBefore, 2 * reads, "reads carried the item's reads")
    }
}
