// Integration tests of SecretServiceStore against a real gnome-keyring on a real session bus.
// Every check of ItemStoreContract runs on it in ItemStoreMatrixTests (StoreKind.secretService);
// here is what is the Secret Service's own (locked collections, missing bus, stopped daemon, crash-safe replace).
//
// Most tests run in this process, on the session bus the suite runs under (scripts/secret-session,
// or: HOME=$(mktemp -d) dbus-run-session -- sh -c 'echo -n pw | gnome-keyring-daemon --unlock
// --components=secrets --daemonize >/dev/null; exec swift test --filter SecretServiceStoreTests').
//
// A few cases need a bus this process is not on: a locked collection, a missing bus, a stopped
// daemon. GDBus caches the session bus per process, and a locked login keyring cannot be unlocked
// again without a prompter, so those tests re-run this test binary as a child ("probe") inside a
// nested private session (dbus-run-session + its own gnome-keyring) or with a broken bus address.
// The child runs the store operations in `StoreProbe.run` and prints one line per step.
import Foundation
import XCTest
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class SecretServiceStoreTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself
    /// A per-test namespace, so tests never see each other's items.
    private var tag = ""
    private let store = SecretServiceStore(environment: .process())

    override class func setUp() {
        super.setUp()
        // In a child run, do the probe's work and leave before any test runs.
        StoreProbe.runIfRequested()
    }

    override func setUpWithError() throws {
        try Requirement.requireSecretService()
        tag = "kg-test-\(UUID().uuidString.prefix(8))"
    }

    override func tearDownWithError() throws {
        guard !tag.isEmpty else { return }
        _ = try? store.delete(ItemQuery(itemClass: .genericPassword, service: tag))
        _ = try? store.delete(ItemQuery(itemClass: .genericPassword, service: tag + "-other"))
        _ = try? store.delete(ItemQuery(itemClass: .internetPassword, server: tag + ".example"))
    }

    // MARK: - helpers

    /// The checks every ItemStore must pass (ItemStoreContract), on this test's store.
    private var contract: ItemStoreContract { ItemStoreContract(store: store, tag: tag) }

    // MARK: - round trips

    func test_search_returnsEmpty_whenItemMissing() throws {
        let found = try store.search(ItemQuery(exactly: .generic(service: tag, account: "nobody")), loadBlobs: true)

        XCTAssertEqual(found.count, 0)
    }

    // MARK: - access control (attribute "keygate:access")

    func test_accessControl_isNil_whenTheItemHasNone() throws {
        let written = contract.genericAttributes()
        XCTAssertNil(written.accessControl)
        try store.create(written, blob: [1], replace: false)

        let item = try XCTUnwrap(try store.search(ItemQuery(exactly: written.identity), loadBlobs: false).first)

        XCTAssertNil(item.attributes.accessControl)
    }

    func test_accessControl_isStoredAsTheKeygateAccessAttribute_inItsTextForm() throws {
        try Requirement.require(which("secret-tool") != nil, "secret-tool (libsecret-tools)")
        var written = contract.genericAttributes()
        written.accessControl = [.currentSet, .devicePasscode, .and]
        try store.create(written, blob: [1], replace: false)

        let shown = try Subprocess.run(["secret-tool", "search", "--all", "service", tag, "account", "alice"], timeout: 20)

        XCTAssertEqual(shown.status, 0, shown.err)
        XCTAssertTrue((shown.out + shown.err).contains("attribute.keygate:access = device-passcode,current-set;and"),
                      shown.out + shown.err)
    }

    // MARK: - dates

    /// Every item carries its dates in its own attributes (keygate:created, keygate:modified),
    /// so that a list reads one property an item, not four (the label: below): what those attributes say is what
    /// a search answers. An item without them (an earlier Keygate wrote it) gets the Secret
    /// Service's own Created and Modified, in a list among items that have them.
    func test_dates_comeFromKeygatesAttributes_andItemsWithoutThemGetTheServicesDates() throws {
        let connection = SecretServiceConnection(environment: .process())
        let started = SecretServiceStore.now()
        for account in ["d0", "d1", "d2"] {
            try store.create(contract.genericAttributes(account: account), blob: [1], replace: false)
        }
        let paths = try itemPaths(on: connection)
        XCTAssertEqual(paths.count, 3)
        var byAccount: [String: (path: String, attributes: [String: String])] = [:]
        for path in paths {
            let attributes = try property("Attributes", of: path, on: connection).stringDictionary
            let created = try XCTUnwrap(attributes["keygate:created"].flatMap { UInt64($0) }, "\(attributes)")
            XCTAssertEqual(attributes["keygate:modified"], String(created))
            XCTAssertTrue((started...SecretServiceStore.now()).contains(created), "created \(created)")
            byAccount[attributes["account"] ?? ""] = (path, attributes)
        }

        // d0's attributes say other dates: a search answers them, with either detail.
        var d0 = try XCTUnwrap(byAccount["d0"])
        d0.attributes["keygate:created"] = "1000000000"
        d0.attributes["keygate:modified"] = "1100000000"
        try setAttributes(d0.attributes, of: d0.path, on: connection)
        for detail in [ItemDetail.full, .attributes] {
            let item = try XCTUnwrap(store.search(ItemQuery(service: tag, account: "d0"), loadBlobs: false, detail: detail).first)
            XCTAssertEqual(item.attributes.created, 1_000_000_000)
            XCTAssertEqual(item.attributes.modified, 1_100_000_000)
        }

        // d1's attributes hold no dates: `.full` reads the Secret Service's; `.attributes` leaves them 0.
        var d1 = try XCTUnwrap(byAccount["d1"])
        d1.attributes["keygate:created"] = nil
        d1.attributes["keygate:modified"] = nil
        try setAttributes(d1.attributes, of: d1.path, on: connection)
        let serviceCreated = try XCTUnwrap(property("Created", of: d1.path, on: connection).uint64)
        let serviceModified = try XCTUnwrap(property("Modified", of: d1.path, on: connection).uint64)

        let listed = try store.search(ItemQuery(service: tag), loadBlobs: true, detail: .full)

        XCTAssertEqual(listed.map(\.attributes.identity.account).sorted(), ["d0", "d1", "d2"])
        for item in listed {
            XCTAssertEqual(item.blob, [1])
            XCTAssertEqual(item.attributes, contract.withDates(contract.genericAttributes(account: item.attributes.identity.account),
                                                               from: item.attributes))
            switch item.attributes.identity.account {
            case "d0": XCTAssertEqual([item.attributes.created, item.attributes.modified], [1_000_000_000, 1_100_000_000])
            case "d1": XCTAssertEqual([item.attributes.created, item.attributes.modified], [serviceCreated, serviceModified])
            default: XCTAssertTrue((started...SecretServiceStore.now()).contains(item.attributes.modified))
            }
        }
        let brief = try XCTUnwrap(store.search(ItemQuery(service: tag, account: "d1"), loadBlobs: false, detail: .attributes).first)
        XCTAssertEqual([brief.attributes.created, brief.attributes.modified], [0, 0])
    }

    // MARK: - label

    /// Every item carries its label in its own attributes (keygate:label) as well as in its Label
    /// property, so that a list reads one property an item: what that attribute says is what a
    /// search answers, with either detail. An item without it (an earlier Keygate wrote it) gets
    /// its Label property, in a list among items that have it; an update in place writes both.
    func test_label_comesFromKeygatesAttribute_andItemsWithoutItGetTheLabelProperty() throws {
        let connection = SecretServiceConnection(environment: .process())
        try store.create(contract.genericAttributes(account: "l0", label: "custom"), blob: [1], replace: false)
        try store.create(contract.genericAttributes(account: "l1", label: nil), blob: [1], replace: false)
        try store.create(contract.genericAttributes(account: "l2", label: nil), blob: [1], replace: false)
        var byAccount: [String: (path: String, attributes: [String: String])] = [:]
        for path in try itemPaths(on: connection) {
            let attributes = try property("Attributes", of: path, on: connection).stringDictionary
            XCTAssertEqual(attributes["keygate:label"], try property("Label", of: path, on: connection).string, "\(attributes)")
            byAccount[attributes["account"] ?? ""] = (path, attributes)
        }
        XCTAssertEqual(byAccount["l0"]?.attributes["keygate:label"], "custom")
        XCTAssertEqual(byAccount["l1"]?.attributes["keygate:label"], ItemIdentity.generic(service: tag, account: "l1").displayName)

        // l0's attribute says another label than its Label property: a search answers the attribute.
        var l0 = try XCTUnwrap(byAccount["l0"])
        l0.attributes["keygate:label"] = "from-the-attribute"
        try setAttributes(l0.attributes, of: l0.path, on: connection)
        for detail in [ItemDetail.full, .attributes] {
            let item = try XCTUnwrap(store.search(ItemQuery(service: tag, account: "l0"), loadBlobs: false, detail: detail).first)
            XCTAssertEqual(item.attributes.label, "from-the-attribute")
        }

        // l1's attributes hold no label (nor dates): `.full` reads its Label property; `.attributes` leaves it empty.
        var l1 = try XCTUnwrap(byAccount["l1"])
        l1.attributes["keygate:label"] = nil
        l1.attributes["keygate:created"] = nil
        try setAttributes(l1.attributes, of: l1.path, on: connection)
        try setLabel("an earlier label", of: l1.path, on: connection)
        let listed = try store.search(ItemQuery(service: tag), loadBlobs: true, detail: .full)
        XCTAssertEqual(listed.map(\.attributes.identity.account).sorted(), ["l0", "l1", "l2"])
        for item in listed {
            switch item.attributes.identity.account {
            case "l0": XCTAssertEqual(item.attributes.label, "from-the-attribute")
            case "l1":
                XCTAssertEqual(item.attributes.label, "an earlier label")
                XCTAssertEqual(item.attributes.created, try property("Created", of: l1.path, on: connection).uint64)
            default: XCTAssertEqual(item.attributes.label, ItemIdentity.generic(service: tag, account: "l2").displayName)
            }
        }
        let brief = try XCTUnwrap(store.search(ItemQuery(service: tag, account: "l1"), loadBlobs: false, detail: .attributes).first)
        XCTAssertEqual(brief.attributes.label, "")

        // A query on the label matches the label a list shows.
        XCTAssertEqual(try store.search(ItemQuery(service: tag, label: "an earlier label"), loadBlobs: false, detail: .attributes)
                        .map(\.attributes.identity.account), ["l1"])

        // An update in place with a new label writes it to both.
        try store.create(contract.genericAttributes(account: "l1", label: "renamed"), blob: [2], replace: true)
        XCTAssertEqual(try property("Label", of: l1.path, on: connection).string, "renamed")
        XCTAssertEqual(try property("Attributes", of: l1.path, on: connection).stringDictionary["keygate:label"], "renamed")
    }

    /// Sets the item's Label property, as another tool (or an earlier Keygate) could.
    private func setLabel(_ label: String, of path: String, on connection: SecretServiceConnection) throws {
        let set = ServiceMethodCall(path: path, interface: SecretServiceConnection.propertiesInterface, method: "Set",
                                    arguments: Variant.tuple([Variant.string(SecretServiceConnection.itemInterface),
                                                              Variant.string("Label"), Variant.boxed(Variant.string(label))]),
                                    replyType: "()", action: "set the item's label")
        _ = try XCTUnwrap(connection.calls([set], ServiceDeadline(.seconds(5))).first).get()
    }

    /// An update in place of an item that replaced another (generation 1) keeps its generation
    /// along with its creation date, so a leftover of a killed replacement still reads as older.
    func test_updateInPlace_ofAReplacement_keepsItsGenerationAndCreationDate() throws {
        let connection = SecretServiceConnection(environment: .process())
        var gated = contract.genericAttributes()
        gated.accessControl = .userPresence
        try store.create(gated, blob: [1], replace: false)
        var ungated = gated
        ungated.accessControl = nil
        try store.create(ungated, blob: [2], replace: true)   // new attributes: a replacement
        let path = try XCTUnwrap(itemPaths(on: connection).first)
        let replaced = try property("Attributes", of: path, on: connection).stringDictionary
        XCTAssertEqual(replaced["keygate:generation"], "1")

        try store.create(ungated, blob: [3], replace: true)   // the same attributes: in place

        XCTAssertEqual(try itemPaths(on: connection), [path])
        let updated = try property("Attributes", of: path, on: connection).stringDictionary
        XCTAssertEqual(updated["keygate:generation"], "1")
        XCTAssertEqual(updated["keygate:created"], replaced["keygate:created"])
        XCTAssertNotNil(updated["keygate:modified"])
        XCTAssertEqual(try store.search(ItemQuery(exactly: gated.identity), loadBlobs: true).map(\.blob), [[3]])
    }

    /// The D-Bus paths of this test's items, found by SearchItems on `connection`.
    private func itemPaths(on connection: SecretServiceConnection) throws -> [String] {
        let search = ServiceMethodCall(path: SecretServiceConnection.servicePath, interface: SecretServiceConnection.serviceInterface,
                                       method: "SearchItems", arguments: Variant.tuple([Variant.stringDictionary(["service": tag])]),
                                       replyType: "(aoao)", action: "search for items")
        return try XCTUnwrap(connection.calls([search], ServiceDeadline(.seconds(5))).first).get().child(0)?.strings ?? []
    }

    /// An org.freedesktop.Secret.Item property of the item at `path`, unboxed.
    private func property(_ name: String, of path: String, on connection: SecretServiceConnection) throws -> BusValue {
        let get = ServiceMethodCall(path: path, interface: SecretServiceConnection.propertiesInterface, method: "Get",
                                    arguments: Variant.tuple([Variant.string(SecretServiceConnection.itemInterface), Variant.string(name)]),
                                    replyType: "(v)", action: "read an item property")
        let reply = try XCTUnwrap(connection.calls([get], ServiceDeadline(.seconds(5))).first).get()
        return try XCTUnwrap(reply.child(0)?.unboxed, "\(name) of \(path)")
    }

    /// Sets the item's whole attribute dictionary, as another tool (or an earlier Keygate) could.
    private func setAttributes(_ attributes: [String: String], of path: String, on connection: SecretServiceConnection) throws {
        let set = ServiceMethodCall(path: path, interface: SecretServiceConnection.propertiesInterface, method: "Set",
                                    arguments: Variant.tuple([Variant.string(SecretServiceConnection.itemInterface),
                                                              Variant.string("Attributes"),
                                                              Variant.boxed(Variant.stringDictionary(attributes))]),
                                    replyType: "()", action: "set the item's attributes")
        _ = try XCTUnwrap(connection.calls([set], ServiceDeadline(.seconds(5))).first).get()
    }

    func test_search_throwsDecode_whenTheStoredAccessControlIsInvalid_neverReadingItAsUngated() throws {
        try Requirement.require(which("secret-tool") != nil, "secret-tool (libsecret-tools)")
        // An item under Keygate's schema whose access attribute breaks Apple's rules.
        let stored = try Subprocess.run(["secret-tool", "store", "--label", "bad", "xdg:schema", ItemAttributeCodec.schemaName,
                                         "keygate:class", ItemClass.genericPassword.rawValue, "service", tag,
                                         "account", "mallory", "keygate:access", "user-presence,current-set"],
                                        stdin: Data("x".utf8), timeout: 20)
        XCTAssertEqual(stored.status, 0, stored.err)
        // Keygate refuses to touch an item it cannot read, delete included; its message points to secret-tool.
        defer { _ = try? Subprocess.run(["secret-tool", "clear", "service", tag, "account", "mallory"], timeout: 20) }

        contract.assertThrows(.decode) { _ = try self.store.search(ItemQuery(service: self.tag), loadBlobs: false) }
    }

    // MARK: - duplicates and replace

    // MARK: - other schemas, status

    func test_search_ignoresItemsOfAnotherSchema() throws {
        try Requirement.require(which("secret-tool") != nil, "secret-tool (libsecret-tools)")
        let stored = try Subprocess.run(["secret-tool", "store", "--label", "x", "service", tag, "account", "bar"],
                                        stdin: Data("foreign".utf8), timeout: 20)
        XCTAssertEqual(stored.status, 0, stored.err)
        defer { _ = try? Subprocess.run(["secret-tool", "clear", "service", tag, "account", "bar"], timeout: 20) }

        XCTAssertEqual(try store.search(ItemQuery(service: tag), loadBlobs: true).count, 0)
        XCTAssertEqual(try store.search(ItemQuery(service: tag, account: "bar"), loadBlobs: false).count, 0)
        XCTAssertEqual(try store.delete(ItemQuery(service: tag)), 0)
        let lookup = try Subprocess.run(["secret-tool", "lookup", "service", tag, "account", "bar"], timeout: 20)
        XCTAssertEqual(lookup.out, "foreign", "the foreign item must survive Keygate's delete")
    }

    func test_status_reportsUnlockedDefaultCollection() throws {
        let status = try store.status()

        XCTAssertFalse(status.locked)
        XCTAssertFalse(status.collection.isEmpty)
        XCTAssertTrue(status.backend.contains("Secret Service"))
    }

    // MARK: - speed

    func test_warmGet_takesFewMilliseconds_likeOneSecretToolLookupOrLess() throws {
        // The first read opens the bus, the service and the session, and is not counted.
        let median = try contract.medianWarmGet(warmUp: true)
        // secret-tool lookup takes about 15 ms as a whole process; a warm get must stay well under it
        // (generous, for a loaded 2-core machine).
        XCTAssertLessThan(median, .milliseconds(15), "median warm get \(median)")
        if ProcessInfo.processInfo.environment["KEYGATE_PROBE_VERBOSE"] == "1" { print("median warm get: \(median)") }
    }

    func test_delete_ofManyItems_outlastsTheDeadline_becauseTheDeadlineIsPerCall() throws {
        // Each Delete makes gnome-keyring rewrite its file: 200 of them take longer than 200 ms in
        // all (about 2 ms each here), yet each single call answers within it (a 50 ms deadline was
        // once too short for one call on a loaded CI machine: a rewrite waits for the disk).
        for index in 0..<200 { try store.create(contract.genericAttributes(account: "d\(index)"), blob: [1], replace: false) }
        let shortDeadline = SecretServiceStore(deadline: .milliseconds(200), environment: .process())
        let started = ContinuousClock.now

        let deleted = try shortDeadline.delete(ItemQuery(itemClass: .genericPassword, service: tag))

        let elapsed = ContinuousClock.now - started
        XCTAssertEqual(deleted, 200)
        XCTAssertGreaterThan(elapsed, .milliseconds(200), "the whole run must outlast one call's deadline to prove anything")
        XCTAssertEqual(try store.search(ItemQuery(service: tag), loadBlobs: false).count, 0)
    }

    func test_search_ofManyItems_pipelinesTheirProperties_andKeepsEveryOne() throws {
        let accounts = (0..<100).map { "p\($0)" }
        for account in accounts { try store.create(contract.genericAttributes(account: account), blob: [7], replace: false) }

        let found = try store.search(ItemQuery(service: tag), loadBlobs: true)

        XCTAssertEqual(Set(found.map(\.attributes.identity.account)), Set(accounts))
        XCTAssertTrue(found.allSatisfy { $0.blob == [7] })
    }

    func test_manyConcurrentProcesses_readTheSameItem_andTheServiceSurvives() throws {
        try store.create(contract.genericAttributes(), blob: [4, 2], replace: false)
        var children: [Process] = []
        var outputs: [Pipe] = []
        for _ in 0..<24 {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            child.arguments = ["KeygateIntegrationTests.SecretServiceStoreTests"]
            var env = ProcessInfo.processInfo.environment
            env["KEYGATE_STORE_PROBE"] = "hammer"
            env["KEYGATE_PROBE_SERVICE"] = tag
            child.environment = env
            let pipe = Pipe()
            child.standardOutput = pipe
            child.standardError = pipe
            try child.run()
            children.append(child)
            outputs.append(pipe)
        }
        var transcript = ""
        for (child, pipe) in zip(children, outputs) {
            transcript += String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
        }

        XCTAssertEqual(transcript.components(separatedBy: "KEYGATE-PROBE hammer ok").count - 1, 24, transcript)
        XCTAssertEqual(try store.search(ItemQuery(exactly: contract.genericAttributes().identity), loadBlobs: true).first?.blob, [4, 2])
    }

    // MARK: - child processes: locked collection, no bus, stopped daemon

    func test_operations_throwInteractionNotAllowed_whenDefaultCollectionLocked() throws {
        let result = try StoreProbe.runInNestedSession(.locked)

        XCTAssertEqual(result.step("create-unlocked"), "ok", result.transcript)
        XCTAssertEqual(result.step("lock"), "ok", result.transcript)
        XCTAssertEqual(result.step("search"), "errSecInteractionNotAllowed", result.transcript)
        XCTAssertEqual(result.step("search-exact"), "errSecInteractionNotAllowed", result.transcript)
        XCTAssertEqual(result.step("create"), "errSecInteractionNotAllowed", result.transcript)
        XCTAssertEqual(result.step("delete"), "errSecInteractionNotAllowed", result.transcript)
        XCTAssertEqual(result.step("status"), "locked", result.transcript)
        XCTAssertTrue(result.transcript.contains("the default keyring collection is locked"), result.transcript)
    }

    func test_search_throwsNotAvailable_quickly_whenBusSocketMissing() throws {
        let result = try StoreProbe.run(.noBus, environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/kg-bus"])

        XCTAssertEqual(result.step("search"), "errSecNotAvailable", result.transcript)
        XCTAssertLessThan(result.milliseconds("search"), 2000, result.transcript)
        XCTAssertTrue(result.transcript.contains("libexec/keygate/secret-session"), result.transcript)
    }

    func test_search_throwsNotAvailable_whenNoBusAddressAndNoDisplay() throws {
        let result = try StoreProbe.run(.noBus, environment: [:], removing: ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY"])

        XCTAssertEqual(result.step("search"), "errSecNotAvailable", result.transcript)
        XCTAssertTrue(result.transcript.contains("no D-Bus session bus"), result.transcript)
        XCTAssertFalse(result.transcript.contains("GDBus.Error"), result.transcript)
    }

    func test_search_throwsNotAvailable_whenBusHasNoSecretService() throws {
        // A nested bus with no gnome-keyring on it and no service files to activate one.
        let result = try StoreProbe.runInNestedSession(.noBus, startKeyring: false, serviceFiles: false)

        XCTAssertEqual(result.step("search"), "errSecNotAvailable", result.transcript)
        XCTAssertTrue(result.transcript.contains("no Secret Service on the session bus: start gnome-keyring-daemon"),
                      result.transcript)
    }

    func test_search_throwsNotAvailable_whenNoDefaultCollection() throws {
        // D-Bus activation starts gnome-keyring without --unlock in an empty HOME: no login keyring, no default alias.
        let result = try StoreProbe.runInNestedSession(.noBus, startKeyring: false)

        XCTAssertEqual(result.step("search"), "errSecNotAvailable", result.transcript)
        XCTAssertTrue(result.transcript.contains("has no default collection"), result.transcript)
    }

    func test_operations_failWithinDeadline_whenDaemonStopped() throws {
        let result = try StoreProbe.runInNestedSession(.stopped)

        // Cold: the stopped daemon is met by the very first call of the process.
        XCTAssertEqual(result.step("cold-search"), "errSecNotAvailable", result.transcript)
        XCTAssertLessThan(result.milliseconds("cold-search"), StoreProbe.deadlineMilliseconds + 2000, result.transcript)
        XCTAssertGreaterThanOrEqual(result.milliseconds("cold-search"), StoreProbe.deadlineMilliseconds - 100,
                                    result.transcript)
        // Warm: the daemon answered before, then stopped (libsecret's cached service and session).
        XCTAssertEqual(result.step("warm-create"), "ok", result.transcript)
        XCTAssertEqual(result.step("stopped-search"), "errSecNotAvailable", result.transcript)
        XCTAssertLessThan(result.milliseconds("stopped-search"), StoreProbe.deadlineMilliseconds + 2000,
                          result.transcript)
        XCTAssertTrue(result.transcript.contains("did not answer within 1 s"), result.transcript)
        // Once the daemon runs again, the same process recovers.
        XCTAssertEqual(result.step("resumed-search"), "ok", result.transcript)
    }

    /// A session the daemon no longer knows (closed here; a restarted daemon forgets them all)
    /// makes GetSecrets answer org.freedesktop.Secret.Error.NoSession: that error carries the
    /// stale-session reason, and a read then opens a new session and gets the secret.
    func test_read_afterTheDaemonForgetsTheSession_opensANewOne() throws {
        let connection = SecretServiceConnection(environment: .process())
        let store = SecretServiceStore(connection: connection)
        let deadline = ServiceDeadline(.seconds(5))
        let written = ItemAttributes(identity: .generic(service: tag, account: "stale-session"), label: "stale session")
        try store.create(written, blob: [1, 2, 3], replace: false)
        let query = ItemQuery(exactly: written.identity)
        XCTAssertEqual(try store.search(query, loadBlobs: true).first?.blob, [1, 2, 3])

        let session = try connection.session(deadline)
        try close(session, on: connection)
        let getSecrets = ServiceMethodCall(path: SecretServiceConnection.servicePath, interface: SecretServiceConnection.serviceInterface,
                                           method: "GetSecrets",
                                           arguments: Variant.tuple([Variant.objectPaths([]), Variant.objectPath(session)]),
                                           replyType: "(a{o(oayays)})", action: "read item secrets")
        guard case .failure(let stale) = try XCTUnwrap(connection.calls([getSecrets], deadline).first) else {
            return XCTFail("GetSecrets on a closed session succeeded")
        }
        XCTAssertTrue(SecretServiceStore.isStaleSession(stale), stale.message)

        XCTAssertEqual(try store.search(query, loadBlobs: true).first?.blob, [1, 2, 3], "read again through a new session")
        XCTAssertNotEqual(try connection.session(deadline), session)
    }

    // MARK: - a read of an item read before (the search carries the item's reads)

    /// A store on its own connection that has read `written` once, the provider already named
    /// (asked once per connection, before a read first sends anything with its search). Its unlock
    /// prompt is `auto`, as a library's and the CLI's are by default: with `never`, every operation
    /// first asks whether the collection is locked (one wait more, counted apart).
    private func readerThatRead(_ written: ItemAttributes, blob: [UInt8]) throws -> (SecretServiceStore, SecretServiceConnection) {
        let connection = SecretServiceConnection(environment: .process())
        let reader = SecretServiceStore(connection: connection, unlockPrompt: .auto)
        XCTAssertEqual(reader.provider(), .gnomeKeyring, "these cases are gnome-keyring's (the only provider read ahead of)")
        XCTAssertEqual(try reader.search(ItemQuery(exactly: written.identity), loadBlobs: true).map(\.blob), [blob])
        return (reader, connection)
    }

    /// The second read of an item sends the item's attribute read and GetSecrets with its search:
    /// one wait, not two, and the same item and blob.
    func test_readOfAnItemReadBefore_waitsOnce_andGetsTheSameItem() throws {
        let written = contract.genericAttributes(account: "ahead")
        try store.create(written, blob: [7, 1], replace: false)
        let (reader, connection) = try readerThatRead(written, blob: [7, 1])
        let before = connection.waits.load(ordering: .relaxed)

        let found = try reader.search(ItemQuery(exactly: written.identity), loadBlobs: true)

        XCTAssertEqual(connection.waits.load(ordering: .relaxed) - before, 1, "one wait: the search and the item's reads together")
        XCTAssertEqual(found.map(\.blob), [[7, 1]])
        XCTAssertEqual(found.first?.attributes.identity, written.identity)
        XCTAssertEqual(found.first?.attributes.label, written.label)
    }

    /// What rides along is read after the search, in the same wait: attributes another process
    /// changed since the last read (here the label, in place: the same path) are the ones returned.
    func test_readOfAnItemReadBefore_returnsItsAttributesAsTheyAreNow() throws {
        let written = contract.genericAttributes(account: "changed")
        try store.create(written, blob: [7, 2], replace: false)
        let (reader, connection) = try readerThatRead(written, blob: [7, 2])
        let path = try XCTUnwrap(itemPaths(on: connection).first)
        var attributes = try property("Attributes", of: path, on: connection).stringDictionary
        attributes[ItemAttributeCodec.Key.label] = "renamed meanwhile"
        try setAttributes(attributes, of: path, on: connection)
        let before = connection.waits.load(ordering: .relaxed)

        let found = try reader.search(ItemQuery(exactly: written.identity), loadBlobs: true)

        XCTAssertEqual(connection.waits.load(ordering: .relaxed) - before, 1)
        XCTAssertEqual(found.first?.attributes.label, "renamed meanwhile")
        XCTAssertEqual(found.map(\.blob), [[7, 2]])
    }

    /// An item replaced by another process since the last read (new attributes: a new item at a
    /// new path, the old one deleted): the search finds the new one, what rode along is dropped,
    /// and the new item is read (a second wait).
    func test_readOfAnItemReplacedSinceTheLastRead_returnsTheNewItem() throws {
        let written = contract.genericAttributes(account: "replaced")
        try store.create(written, blob: [7, 3], replace: false)
        let (reader, connection) = try readerThatRead(written, blob: [7, 3])
        var gated = written
        gated.accessControl = .userPresence
        try store.create(gated, blob: [7, 4], replace: true)
        let before = connection.waits.load(ordering: .relaxed)

        let found = try reader.search(ItemQuery(exactly: written.identity), loadBlobs: true)

        XCTAssertEqual(connection.waits.load(ordering: .relaxed) - before, 2, "the guess was wrong: the new item is read after")
        XCTAssertEqual(found.map(\.blob), [[7, 4]])
        XCTAssertEqual(found.first?.attributes.accessControl, .userPresence)
        // Then the new item is the one read ahead of.
        XCTAssertEqual(try reader.search(ItemQuery(exactly: written.identity), loadBlobs: true).map(\.blob), [[7, 4]])
    }

    /// An item deleted by another process since the last read is absent: the search decides.
    func test_readOfAnItemDeletedSinceTheLastRead_findsNothing() throws {
        let written = contract.genericAttributes(account: "deleted")
        try store.create(written, blob: [7, 5], replace: false)
        let (reader, _) = try readerThatRead(written, blob: [7, 5])
        _ = try store.delete(ItemQuery(exactly: written.identity))

        XCTAssertEqual(try reader.search(ItemQuery(exactly: written.identity), loadBlobs: true).count, 0)
    }

    /// Reads of two items in turn each read ahead of their own item, never the other's.
    func test_readsOfTwoItemsInTurn_eachGetItsOwnItem_inOneWait() throws {
        let first = contract.genericAttributes(account: "first")
        let second = contract.genericAttributes(account: "second")
        try store.create(first, blob: [1], replace: false)
        try store.create(second, blob: [2], replace: false)
        let (reader, connection) = try readerThatRead(first, blob: [1])
        XCTAssertEqual(try reader.search(ItemQuery(exactly: second.identity), loadBlobs: true).map(\.blob), [[2]])
        let before = connection.waits.load(ordering: .relaxed)

        XCTAssertEqual(try reader.search(ItemQuery(exactly: first.identity), loadBlobs: true).map(\.blob), [[1]])
        XCTAssertEqual(try reader.search(ItemQuery(exactly: second.identity), loadBlobs: true).map(\.blob), [[2]])

        XCTAssertEqual(connection.waits.load(ordering: .relaxed) - before, 2, "one wait each")
    }

    /// A list's secrets come in GetSecrets calls of `secretsPerCall` items (one call for all of
    /// 10,000 items took gnome-keyring 11.5 s, past the deadline): every item gets its own blob
    /// back, across chunk boundaries and a last, shorter chunk.
    func test_search_loadsSecretsInChunks_andEachItemGetsItsOwnBlob() throws {
        let chunked = SecretServiceStore(connection: SecretServiceConnection(environment: .process()), secretsPerCall: 3)
        let accounts = (0..<11).map { "c\($0)" }
        for (index, account) in accounts.enumerated() {
            try store.create(contract.genericAttributes(account: account), blob: [UInt8(index), 0xC5], replace: false)
        }

        let found = try chunked.search(ItemQuery(service: tag), loadBlobs: true)

        XCTAssertEqual(found.count, accounts.count)
        for item in found {
            let index = try XCTUnwrap(accounts.firstIndex(of: item.attributes.identity.account))
            XCTAssertEqual(item.blob, [UInt8(index), 0xC5], item.attributes.identity.account)
        }
    }

    /// The same after the daemon forgot the session: every chunk's GetSecrets fails with
    /// NoSession, one new session is opened, and every chunk is asked again through it.
    func test_search_inChunks_afterTheDaemonForgetsTheSession_readsEveryBlobThroughOneNewSession() throws {
        let connection = SecretServiceConnection(environment: .process())
        let chunked = SecretServiceStore(connection: connection, secretsPerCall: 2)
        let deadline = ServiceDeadline(.seconds(5))
        for index in 0..<5 {
            try store.create(contract.genericAttributes(account: "s\(index)"), blob: [UInt8(index)], replace: false)
        }
        XCTAssertEqual(try chunked.search(ItemQuery(service: tag), loadBlobs: true).count, 5)
        let session = try connection.session(deadline)
        try close(session, on: connection)

        let found = try chunked.search(ItemQuery(service: tag), loadBlobs: true)

        XCTAssertEqual(Set(found.compactMap { $0.blob }), Set((0..<5).map { [UInt8($0)] }))
        XCTAssertNotEqual(try connection.session(deadline), session)
    }

    /// Closes `session` as a restarted daemon would have forgotten it.
    private func close(_ session: String, on connection: SecretServiceConnection) throws {
        let close = ServiceMethodCall(path: session, interface: "org.freedesktop.Secret.Session", method: "Close",
                                      arguments: nil, replyType: "()", action: "close the session")
        _ = try XCTUnwrap(connection.calls([close], ServiceDeadline(.seconds(5))).first).get()
    }

    private func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// The child side of the tests above, and the parent's means to start it.
enum StoreProbe {
    enum Mode: String { case locked, noBus = "no-bus", stopped, hammer }

    static let deadlineMilliseconds = 1000
    private static let modeVariable = "KEYGATE_STORE_PROBE"
    private static let pidVariable = "KEYGATE_STORE_PROBE_DAEMON_PID"
    private static let prefix = "KEYGATE-PROBE"

    struct Result {
        let transcript: String

        init(transcript: String) {
            self.transcript = transcript
            // KEYGATE_PROBE_VERBOSE=1 shows what each child printed, passing or not.
            if ProcessInfo.processInfo.environment["KEYGATE_PROBE_VERBOSE"] == "1" {
                FileHandle.standardError.write(Data(transcript.utf8))
            }
        }

        /// The outcome of a step: "ok", an errSec name, or "locked"/"unlocked" for status.
        func step(_ name: String) -> String? { fields(name)?.outcome }
        func milliseconds(_ name: String) -> Int { fields(name)?.ms ?? Int.max }

        private func fields(_ name: String) -> (outcome: String, ms: Int)? {
            for line in transcript.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 4).map(String.init)
                if parts.count >= 4, parts[0] == StoreProbe.prefix, parts[1] == name {
                    return (parts[2], Int(parts[3]) ?? Int.max)
                }
            }
            return nil
        }
    }

    // MARK: parent

    /// Runs the probe in this test binary with `environment` added (and `removing` taken out).
    static func run(_ mode: Mode, environment: [String: String], removing: [String] = []) throws -> Result {
        var env = ProcessInfo.processInfo.environment
        for key in removing { env.removeValue(forKey: key) }
        env.merge(environment) { _, new in new }
        env[modeVariable] = mode.rawValue
        let result = try Subprocess.run([try selfPath(), selector], environment: env, timeout: 60)
        return Result(transcript: result.out + result.err)
    }

    /// Runs the probe inside a new dbus-run-session with its own gnome-keyring (HOME in a temporary folder).
    static func runInNestedSession(_ mode: Mode, startKeyring: Bool = true, serviceFiles: Bool = true) throws -> Result {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-run-session"), "dbus-run-session")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/gnome-keyring-daemon"), "gnome-keyring-daemon")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/gdbus"), "gdbus")
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("kg-probe-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        var env = ProcessInfo.processInfo.environment
        for key in ["DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "XDG_RUNTIME_DIR", "GNOME_KEYRING_CONTROL"] {
            env.removeValue(forKey: key)
        }
        env["HOME"] = home
        env[modeVariable] = mode.rawValue
        env["KEYGATE_PROBE_START_KEYRING"] = startKeyring ? "1" : "0"
        // The keyring runs in the foreground of this script, so the script knows its pid: it
        // stops nothing and kills nothing but its own daemon.
        let script = """
            if [ "$KEYGATE_PROBE_START_KEYRING" = 1 ]; then
              echo -n pw | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
              daemon=$!
              i=0
              until gdbus call --session --dest org.freedesktop.DBus --object-path /org/freedesktop/DBus \
                  --method org.freedesktop.DBus.NameHasOwner org.freedesktop.secrets 2>/dev/null | grep -q true; do
                i=$((i+1)); if [ $i -gt 200 ]; then echo "\(prefix)-SETUP keyring did not start"; kill $daemon; exit 1; fi
                sleep 0.05
              done
              export \(pidVariable)=$daemon
            fi
            "$0" "$1"; status=$?
            if [ -n "$daemon" ]; then kill -CONT $daemon 2>/dev/null; kill $daemon 2>/dev/null; wait $daemon 2>/dev/null; fi
            exit $status
            """
        var bus = ["dbus-run-session"]
        if !serviceFiles {
            // A session bus like the standard one, but with no service folders: nothing can be activated.
            let config = home + "/session.conf"
            try """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig>
                  <type>session</type>
                  <listen>unix:tmpdir=/tmp</listen>
                  <auth>EXTERNAL</auth>
                  <policy context="default">
                    <allow send_destination="*" eavesdrop="true"/>
                    <allow eavesdrop="true"/>
                    <allow own="*"/>
                  </policy>
                </busconfig>
                """.write(toFile: config, atomically: true, encoding: .utf8)
            bus.append("--config-file=\(config)")
        }
        let result = try Subprocess.run(bus + ["--", "sh", "-c", script, try selfPath(), selector],
                                        environment: env, timeout: 90)
        return Result(transcript: result.out + result.err)
    }

    /// The whole class: its class-level setUp runs the probe and exits before any test starts.
    private static var selector: String { "KeygateIntegrationTests.SecretServiceStoreTests" }

    private static func selfPath() throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    // MARK: child

    /// In a child started by `run`, performs the probe and exits; otherwise returns at once.
    static func runIfRequested() {
        guard let raw = ProcessInfo.processInfo.environment[modeVariable], let mode = Mode(rawValue: raw) else { return }
        let store = SecretServiceStore(deadline: .milliseconds(deadlineMilliseconds), environment: .process())
        let tag = "kg-probe-\(UUID().uuidString.prefix(8))"
        let attributes = ItemAttributes(identity: .generic(service: tag, account: "probe"), label: "probe")
        switch mode {
        case .locked:
            // The item exists before the lock, so "not found" would be a wrong answer.
            step("create-unlocked") { try store.create(attributes, blob: [1], replace: false) }
            step("lock") {
                let locked = try Subprocess.run(
                    ["gdbus", "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path",
                     "/org/freedesktop/secrets", "--method", "org.freedesktop.Secret.Service.Lock",
                     "['/org/freedesktop/secrets/aliases/default']"], timeout: 20)
                guard locked.status == 0 else { throw KeychainError(.param, "gdbus Lock failed: \(locked.err)") }
            }
            step("search") { _ = try store.search(ItemQuery(itemClass: .genericPassword), loadBlobs: false) }
            step("search-exact") { _ = try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: true) }
            step("create") { try store.create(attributes, blob: [1], replace: false) }
            step("delete") { try store.delete(ItemQuery(service: tag)) }
            let started = ContinuousClock.now
            do {
                let status = try store.status()
                report("status", status.locked ? "locked" : "unlocked", started, status.collection)
            } catch {
                report("status", error, started)
            }
        case .noBus:
            step("search") { _ = try store.search(ItemQuery(service: tag), loadBlobs: true) }
        case .hammer:
            // Many short processes reading one item at once, as `keygate get` in a loop does.
            let service = ProcessInfo.processInfo.environment["KEYGATE_PROBE_SERVICE"] ?? tag
            let hammered = SecretServiceStore(environment: .process())
            step("hammer") {
                let rounds = ProcessInfo.processInfo.environment["KEYGATE_PROBE_ROUNDS"].flatMap { Int($0) } ?? 20
                for _ in 0..<rounds {
                    guard try hammered.search(ItemQuery(exactly: .generic(service: service, account: "alice")),
                                              loadBlobs: true).first?.blob == [4, 2] else {
                        throw KeychainError(.itemNotFound, "hammered item missing")
                    }
                }
            }
        case .stopped:
            let pid = ProcessInfo.processInfo.environment[pidVariable].flatMap { pid_t($0) } ?? 0
            guard pid > 0 else {
                FileHandle.standardOutput.write(Data("\(prefix)-SETUP no daemon pid\n".utf8))
                exit(1)
            }
            kill(pid, SIGSTOP)
            step("cold-search") { _ = try store.search(ItemQuery(service: tag), loadBlobs: true) }
            kill(pid, SIGCONT)
            step("warm-create") { try store.create(attributes, blob: [1, 0, 1], replace: false) }
            kill(pid, SIGSTOP)
            step("stopped-search") { _ = try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: true) }
            kill(pid, SIGCONT)
            step("resumed-search") {
                let found = try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: true)
                guard found.first?.blob == [1, 0, 1] else { throw KeychainError(.itemNotFound, "probe item missing") }
            }
        }
        exit(0)
    }

    private static func step(_ name: String, _ body: () throws -> Void) {
        let started = ContinuousClock.now
        do {
            try body()
            report(name, "ok", started, "")
        } catch {
            report(name, error, started)
        }
    }

    private static func report(_ name: String, _ error: Error, _ started: ContinuousClock.Instant) {
        if let error = error as? KeychainError {
            report(name, error.code.name, started, error.message)
        } else {
            report(name, "unexpected", started, "\(error)")
        }
    }

    private static func report(_ name: String, _ outcome: String, _ started: ContinuousClock.Instant, _ detail: String) {
        let elapsed = ContinuousClock.now - started
        let ms = Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
        FileHandle.standardOutput.write(Data("\(prefix) \(name) \(outcome) \(ms) \(detail)\n".utf8))
    }
}
