// Integration tests of EmbeddedStore against a real SQLite database file. Every check of
// ItemStoreContract runs on it in ItemStoreMatrixTests (StoreKind.embedded); here is what is
// the embedded store's own:
// file modes, WAL, the UNIQUE index, concurrent writers, errors that say what to do,
// and kill -9 during writes (the test binary re-runs itself as a writer child, as
// SecretServiceStoreTests' probe does, and the parent kills it at random moments).
import Foundation
import XCTest
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class EmbeddedStoreTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself
    private var directory = ""
    private var store: EmbeddedStore!
    private let tag = "kg-embedded"

    override class func setUp() {
        super.setUp()
        KillWriter.runIfRequested()
    }

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "kg-embedded-\(UUID().uuidString)/keygate"
        store = EmbeddedStore(directory: directory, deadline: .seconds(5))
    }

    override func tearDownWithError() throws {
        _ = chmod(directory, 0o700)
        try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent)
    }

    // MARK: - helpers

    /// The checks every ItemStore must pass (ItemStoreContract), on this test's store.
    private var contract: ItemStoreContract { ItemStoreContract(store: store, tag: tag) }

    private func internetAttributes() -> ItemAttributes {
        ItemAttributes(identity: .internet(server: tag + ".example", account: "bob", protocol: .https, port: 8443,
                                           path: "/login", securityDomain: "realm", authenticationType: .htmlForm),
                       label: "bob at example", comment: nil, generic: [0x01],
                       accessibility: .whenUnlockedThisDeviceOnly, description: "Web password", accessGroup: "group.a",
                       synchronizable: true)
    }

    // MARK: - round trips

    func test_search_roundTripsTextWithEmbeddedNulAndNonASCII() throws {
        let written = ItemAttributes(identity: .generic(service: tag, account: "a\u{0}b-é-😀"), label: "l\u{0}x")
        try store.create(written, blob: [1], replace: false)

        let item = try XCTUnwrap(try store.search(ItemQuery(exactly: written.identity), loadBlobs: false).first)

        XCTAssertEqual(item.attributes.identity.account, "a\u{0}b-é-😀")
        XCTAssertEqual(item.attributes.label, "l\u{0}x")
        XCTAssertEqual(try store.search(ItemQuery(exactly: .generic(service: tag, account: "a")), loadBlobs: false).count, 0)
    }

    func test_search_returnsEmpty_andCreatesNoFile_whenStoreNeverUsed() throws {
        XCTAssertEqual(try store.search(ItemQuery(exactly: .generic(service: tag, account: "nobody")), loadBlobs: true).count, 0)
        XCTAssertEqual(try store.delete(ItemQuery(service: tag)), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: store.path), "reads must not create the database")
    }

    func test_search_matchesDescriptionAndAccessGroup_onlyWhenSet() throws {
        try store.create(internetAttributes(), blob: [1], replace: false)

        XCTAssertEqual(try store.search(ItemQuery(accessGroup: "group.a"), loadBlobs: false).count, 1)
        XCTAssertEqual(try store.search(ItemQuery(accessGroup: "group.b"), loadBlobs: false).count, 0)
        XCTAssertEqual(try store.search(ItemQuery(description: "Web password"), loadBlobs: false).count, 1)
        XCTAssertEqual(try store.search(ItemQuery(synchronizable: false), loadBlobs: false).count, 0)
    }

    // MARK: - access control

    func test_search_throwsDecode_whenTheStoredAccessControlIsInvalid_neverReadingItAsUngated() throws {
        var gated = contract.genericAttributes()
        gated.accessControl = .userPresence
        try store.create(gated, blob: [1], replace: false)
        let db = try SQLiteDatabase(path: store.path, create: false)
        try db.execute("UPDATE attributes SET value = 'user-presence,current-set' WHERE name = 'keygate:access'")

        contract.assertThrows(.decode, { _ = try self.store.search(ItemQuery(service: self.tag), loadBlobs: false) },
                     messageContains: store.path)
    }

    // MARK: - duplicates and replace

    func test_database_refusesASecondRowWithTheSameIdentity_byItsUniqueIndex() throws {
        try store.create(contract.genericAttributes(), blob: [1], replace: false)
        let db = try SQLiteDatabase(path: store.path, create: false)

        XCTAssertThrowsError(try db.execute("INSERT INTO items (identity, label, created, modified, blob) "
                                            + "SELECT identity, 'x', 0, 0, x'00' FROM items")) { error in
            XCTAssertTrue((error as? SQLiteError)?.isConstraintUnique == true, "\(error)")
        }
    }

    /// One connection's transactions, as keygate-secret-service's kept connection runs them
    /// (BEGIN and COMMIT prepared once and stepped again each time): every read transaction sees
    /// what another connection committed before it began, and a write that failed leaves the
    /// connection out of any transaction, its next write committed.
    func test_aKeptConnection_seesEachNewCommit_andWritesAgainAfterAFailedOne() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/transactions.sqlite"
        let kept = try SQLiteDatabase(path: path, create: true)
        try kept.execute("PRAGMA journal_mode=WAL; CREATE TABLE t (x INTEGER PRIMARY KEY)")
        let other = try SQLiteDatabase(path: path, create: false)
        func count(_ db: SQLiteDatabase) throws -> String? { try db.readTransaction { try db.scalarText("SELECT count(*) FROM t") } }

        for round in 1...3 {
            try other.writeTransaction { try other.execute("INSERT INTO t (x) VALUES (\(round))") }
            XCTAssertEqual(try count(kept), "\(round)", "the kept connection's read transaction \(round) sees the new commit")
        }
        XCTAssertThrowsError(try kept.writeTransaction { try kept.execute("INSERT INTO t (x) VALUES (1)") }) { error in
            XCTAssertTrue((error as? SQLiteError)?.isConstraintUnique == true, "\(error)")
        }
        try kept.writeTransaction { try kept.execute("INSERT INTO t (x) VALUES (4)") }
        XCTAssertEqual(try count(other), "4", "the kept connection's write after a failed one is committed")
        XCTAssertEqual(try count(kept), "4")
    }

    // MARK: - the file

    func test_database_isPrivate_inWALMode_withSchemaVersion_andHoldsTheBlobAsGiven() throws {
        umask(0o022)
        try store.create(contract.genericAttributes(), blob: contract.binaryBlob, replace: false)

        let fileMode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int)
        let dirMode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: directory)[.posixPermissions] as? Int)
        XCTAssertEqual(fileMode, 0o600)
        XCTAssertEqual(dirMode, 0o700)
        XCTAssertEqual(try store.journalMode(), "wal")
        XCTAssertEqual(try store.integrityCheck(), "ok")
        let db = try SQLiteDatabase(path: store.path, create: false)
        XCTAssertEqual(try db.scalarText("SELECT version FROM schema_version"), current)
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), current, "the header holds the schema version too")
        XCTAssertEqual(try db.scalarText("SELECT hex(blob) FROM items"),
                       contract.binaryBlob.map { String(format: "%02X", $0) }.joined())
        if let walMode = FileManager.default.fileExists(atPath: store.path + "-wal")
            ? try FileManager.default.attributesOfItem(atPath: store.path + "-wal")[.posixPermissions] as? Int : nil {
            XCTAssertEqual(walMode, 0o600, "the WAL copies the database's mode")
        }
    }

    func test_walFiles_outliveEachConnection_andAWriteLeavesTheLogEmpty() throws {
        try store.create(contract.genericAttributes(), blob: contract.binaryBlob, replace: false)
        func info(_ suffix: String) throws -> stat {
            var st = stat()
            guard lstat(store.path + suffix, &st) == 0 else { throw POSIXError(.ENOENT) }
            return st
        }
        // The writer's connection is closed: its checkpoint emptied the log, which stays.
        let wal = try info("-wal"), shm = try info("-shm")
        XCTAssertEqual(wal.st_size, 0, "the checkpoint at close cuts the log back to empty (journal_size_limit = 0)")
        XCTAssertEqual(wal.st_mode & 0o777, 0o600)
        XCTAssertEqual(shm.st_mode & 0o777, 0o600)

        XCTAssertEqual(try store.search(ItemQuery(), loadBlobs: true).first?.blob, contract.binaryBlob)
        try store.create(contract.genericAttributes(account: "second"), blob: [1, 2, 3], replace: false)
        XCTAssertEqual(try store.search(ItemQuery(), loadBlobs: false).count, 2)
        // Neither file was deleted and made again by the read or the write that followed.
        XCTAssertEqual(try info("-wal").st_ino, wal.st_ino)
        XCTAssertEqual(try info("-shm").st_ino, shm.st_ino)
        XCTAssertEqual(try info("-wal").st_size, 0)
    }

    func test_status_namesTheEmbeddedStoreAndItsFile() throws {
        let status = try store.status()

        XCTAssertEqual(status.backend, EmbeddedStore.backendName)
        XCTAssertEqual(status.collection, store.path)
        XCTAssertFalse(status.locked)
    }

    func test_open_throwsNotAvailable_withAdvice_whenTheFileIsCorrupt() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(repeating: 0x5a, count: 8192).write(to: URL(fileURLWithPath: store.path))

        contract.assertThrows(.notAvailable, { _ = try self.store.search(ItemQuery(), loadBlobs: false) },
                     messageContains: "move it aside")
        contract.assertThrows(.notAvailable, { try self.store.create(self.contract.genericAttributes(), blob: [1], replace: false) },
                     messageContains: "corrupt")
    }

    func test_open_refusesASymbolicLink() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let elsewhere = directory + "/../elsewhere.sqlite"
        FileManager.default.createFile(atPath: elsewhere, contents: nil)
        try FileManager.default.createSymbolicLink(atPath: store.path, withDestinationPath: elsewhere)

        contract.assertThrows(.notAvailable, { try self.store.create(self.contract.genericAttributes(), blob: [1], replace: false) },
                     messageContains: "symbolic link")
    }

    func test_exactRead_goesByTheIdentity_andStillChecksTheItemsAttributes() throws {
        let written = contract.genericAttributes(account: "exact")
        try store.create(written, blob: [7], replace: false)
        try store.create(internetAttributes(), blob: [8], replace: false)
        XCTAssertEqual(try store.search(ItemQuery(exactly: written.identity), loadBlobs: true).map(\.blob), [[7]])
        XCTAssertEqual(try store.search(ItemQuery(exactly: internetAttributes().identity), loadBlobs: true).map(\.blob), [[8]])

        // A row whose identity column and attributes disagree (written by hand) is found by
        // neither road: the identity finds the row, and its attributes then fail the match.
        let db = try SQLiteDatabase(path: store.path, create: false)
        try db.execute("UPDATE attributes SET value = 'someone-else' WHERE name = 'account' AND value = 'exact'")
        XCTAssertEqual(try store.search(ItemQuery(exactly: written.identity), loadBlobs: true).count, 0)
        XCTAssertEqual(try store.search(ItemQuery(exactly: .generic(service: tag, account: "someone-else")),
                                        loadBlobs: true).count, 0)
        XCTAssertEqual(try store.search(ItemQuery(service: tag, account: "someone-else"), loadBlobs: true).map(\.blob), [[7]],
                       "a search by attributes still finds what the attributes say")
    }

    func test_open_refusesADatabaseFromANewerKeygate() throws {
        try store.create(contract.genericAttributes(), blob: [1], replace: false)
        let db = try SQLiteDatabase(path: store.path, create: false)
        try db.execute("UPDATE schema_version SET version = 99; PRAGMA user_version = 99")

        contract.assertThrows(.notAvailable, { _ = try self.store.search(ItemQuery(), loadBlobs: false) },
                     messageContains: "newer Keygate")
    }

    func test_aFileWithTheVersionTableOnly_isCheckedByTheTable_andTheNextWriteAddsTheHeader() throws {
        try store.create(contract.genericAttributes(), blob: [1], replace: false)
        let db = try SQLiteDatabase(path: store.path, create: false)
        // As Keygate wrote the file before the header held the version.
        try db.execute("PRAGMA user_version = 0")
        XCTAssertEqual(try store.search(ItemQuery(exactly: contract.genericAttributes().identity), loadBlobs: true).map(\.blob), [[1]])
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), "0", "a read changes nothing")

        try db.execute("UPDATE schema_version SET version = 99")
        contract.assertThrows(.notAvailable, { _ = try self.store.search(ItemQuery(), loadBlobs: false) },
                     messageContains: "newer Keygate")

        try db.execute("UPDATE schema_version SET version = \(current)")
        try store.create(contract.genericAttributes(account: "second"), blob: [2], replace: false)
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), current)
        XCTAssertEqual(try store.search(ItemQuery(service: tag), loadBlobs: false).count, 2)
    }

    private var current: String { String(EmbeddedStore.schemaVersion) }

    func test_aSchema1File_withASynchronizableItem_movesToSchema2_losingNothing() throws {
        var legacy = contract.genericAttributes(account: "legacy")
        legacy.synchronizable = true
        try store.create(legacy, blob: [5], replace: false)
        try store.create(contract.genericAttributes(account: "plain"), blob: [6], replace: false)
        // As a schema-1 Keygate left it: the identity column is the item's name alone.
        let db = try SQLiteDatabase(path: store.path, create: false)
        let downgrade = try db.prepare("UPDATE items SET identity = ?1 WHERE id = (SELECT item FROM attributes WHERE name = 'synchronizable')")
        try downgrade.bind(1, blob: legacy.identity.canonicalBytes)
        try downgrade.run()
        try db.execute("UPDATE schema_version SET version = 1; PRAGMA user_version = 1")
        XCTAssertEqual(try db.scalarText("SELECT count(*) FROM items WHERE identity = x'\(hex(legacy.identity.storeKey))'"), "0")

        XCTAssertEqual(try store.search(ItemQuery(exactly: legacy.identity), loadBlobs: true).map(\.blob), [[5]],
                       "the first connection moves the file to the current schema; the item is found by its whole key")
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), current)
        XCTAssertEqual(try db.scalarText("SELECT version FROM schema_version"), current)
        XCTAssertEqual(try db.scalarText("SELECT count(*) FROM items WHERE identity = x'\(hex(legacy.identity.storeKey))'"), "1")
        var twin = legacy
        twin.synchronizable = false
        try store.create(twin, blob: [7], replace: false)
        XCTAssertEqual(try store.search(ItemQuery(service: tag, account: "legacy"), loadBlobs: true).compactMap(\.blob).sorted { $0.lexicographicallyPrecedes($1) },
                       [[5], [7]], "the non-synchronizable twin now fits beside it")
        XCTAssertEqual(try store.search(ItemQuery(exactly: contract.genericAttributes(account: "plain").identity), loadBlobs: true)
            .map(\.blob), [[6]])
        XCTAssertEqual(try store.integrityCheck(), "ok")
    }

    func test_aSchema1FileWithNoSynchronizableItem_isReadAsItIs_andMovedByTheNextWrite() throws {
        try store.create(contract.genericAttributes(account: "plain"), blob: [6], replace: false)
        let db = try SQLiteDatabase(path: store.path, create: false)
        try db.execute("UPDATE schema_version SET version = 1; PRAGMA user_version = 1")

        XCTAssertEqual(try store.search(ItemQuery(exactly: contract.genericAttributes(account: "plain").identity), loadBlobs: true)
            .map(\.blob), [[6]])
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), "1", "a read changes nothing")
        try store.create(contract.genericAttributes(account: "second"), blob: [7], replace: false)
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), current)
        XCTAssertEqual(try db.scalarText("SELECT version FROM schema_version"), current)
        XCTAssertEqual(try store.search(ItemQuery(service: tag), loadBlobs: false).count, 2)
    }

    /// A schema-2 file, as the Keygate before the access group joined the key left it: the
    /// identity column of a grouped item is its name (and flag) without the group.
    private func schema2File(with grouped: ItemAttributes) throws -> SQLiteDatabase {
        let db = try SQLiteDatabase(path: store.path, create: false)
        var withoutGroup = grouped.identity
        withoutGroup.accessGroup = ""
        let downgrade = try db.prepare("""
            UPDATE items SET identity = ?1 WHERE id = (SELECT item FROM attributes WHERE name = 'access-group' AND value = ?2)
            """)
        try downgrade.bind(1, blob: withoutGroup.storeKey)
        try downgrade.bind(2, text: grouped.identity.accessGroup)
        try downgrade.run()
        try db.execute("UPDATE schema_version SET version = 2; PRAGMA user_version = 2")
        return db
    }

    func test_aSchema2File_withGroupedItems_movesToSchema3_andTheGroupsTwinFitsBeside() throws {
        var grouped = contract.genericAttributes(account: "grouped")
        grouped.accessGroup = "TEAM.app1"
        try store.create(grouped, blob: [5], replace: false)
        var syncedInGroup = contract.genericAttributes(account: "both")
        syncedInGroup.accessGroup = "TEAM.app1"
        syncedInGroup.synchronizable = true
        try store.create(syncedInGroup, blob: [8], replace: false)
        _ = try schema2File(with: grouped)
        let db = try schema2File(with: syncedInGroup)
        XCTAssertEqual(try db.scalarText("SELECT count(*) FROM items WHERE identity = x'\(hex(grouped.identity.storeKey))'"), "0")

        XCTAssertEqual(try store.search(ItemQuery(exactly: grouped.identity), loadBlobs: true).map(\.blob), [[5]],
                       "the first connection moves the file to schema 3; the item is found by its whole key")
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), "3")
        XCTAssertEqual(try db.scalarText("SELECT version FROM schema_version"), "3")
        XCTAssertEqual(try store.search(ItemQuery(exactly: syncedInGroup.identity), loadBlobs: true).map(\.blob), [[8]])
        var ungrouped = grouped
        ungrouped.accessGroup = nil
        try store.create(ungrouped, blob: [7], replace: false)
        var otherGroup = grouped
        otherGroup.accessGroup = "TEAM.app2"
        try store.create(otherGroup, blob: [9], replace: false)
        XCTAssertEqual(try store.search(ItemQuery(service: tag, account: "grouped"), loadBlobs: true).compactMap(\.blob)
            .sorted { $0.lexicographicallyPrecedes($1) }, [[5], [7], [9]], "the group's twins fit beside it")
        XCTAssertThrowsError(try store.create(grouped, blob: [1], replace: false), "still one item per whole key")
        XCTAssertEqual(try store.integrityCheck(), "ok")
    }

    func test_aSchema2FileWithGroupedItems_inAnImmutableFolder_isReadByAttributes_unmoved() throws {
        try Requirement.require(Requirement.isRoot, "root (chattr +i)")
        var grouped = contract.genericAttributes(account: "grouped")
        grouped.accessGroup = "TEAM.app1"
        try store.create(grouped, blob: [5], replace: false)
        try store.create(contract.genericAttributes(account: "plain"), blob: [6], replace: false)
        _ = try schema2File(with: grouped)
        XCTAssertEqual(try Subprocess.run(["chattr", "-R", "+i", store.directory]).status, 0)
        defer { _ = try? Subprocess.run(["chattr", "-R", "-i", store.directory]) }

        XCTAssertEqual(try store.search(ItemQuery(exactly: grouped.identity), loadBlobs: true).map(\.blob), [[5]],
                       "a read that cannot move the file finds the item by its attributes")
        XCTAssertEqual(try store.search(ItemQuery(exactly: contract.genericAttributes(account: "plain").identity),
                                        loadBlobs: true).map(\.blob), [[6]])
        contract.assertThrows(.notAvailable, { try self.store.create(self.contract.genericAttributes(account: "new"), blob: [7], replace: false) },
                              messageContains: "is read-only: it or the file is immutable")
        _ = try Subprocess.run(["chattr", "-R", "-i", store.directory])
        let db = try SQLiteDatabase(path: store.path, create: false)
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), "2", "a read changed nothing")
    }

    func test_anImmutableFolder_readsCommitsStillInTheWAL_andRefusesAWALItCannotRead() throws {
        try Requirement.require(Requirement.isRoot, "root (chattr +i)")
        try store.create(contract.genericAttributes(account: "first"), blob: [1], replace: false)
        // A reader holding an older snapshot: the writer's checkpoint cannot fold the new commit
        // into the file, so it stays in the WAL, as when a writer is killed before its checkpoint.
        // Another process (a connection in this one would share SQLite's -shm mapping with the reads below).
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = ["-c", """
            import sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute("BEGIN"); c.execute("SELECT count(*) FROM items").fetchall()
            print("ready", flush=True); time.sleep(60)
            """, store.path]
        let ready = Pipe()
        holder.standardOutput = ready
        try holder.run()
        defer { holder.terminate(); holder.waitUntilExit() }
        XCTAssertEqual(String(decoding: ready.fileHandleForReading.readData(ofLength: 6), as: UTF8.self), "ready\n")
        try store.create(contract.genericAttributes(account: "in-the-wal"), blob: [2], replace: false)
        let copy = NSTemporaryDirectory() + "keygate-wal-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { _ = try? Subprocess.run(["chattr", "-R", "-i", copy]); try? FileManager.default.removeItem(atPath: copy) }
        for suffix in ["", "-wal"] {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: copy + "/" + EmbeddedStore.fileName + suffix)
        }
        XCTAssertGreaterThan((try FileManager.default.attributesOfItem(atPath: copy + "/items.sqlite-wal")[.size] as? Int) ?? 0, 0)
        XCTAssertEqual(try Subprocess.run(["chattr", "-R", "+i", store.directory]).status, 0)
        defer { _ = try? Subprocess.run(["chattr", "-R", "-i", store.directory]) }
        XCTAssertEqual(try store.search(ItemQuery(exactly: contract.genericAttributes(account: "in-the-wal").identity), loadBlobs: true)
            .map(\.blob), [[2]], "with its -shm, the WAL is read read-only")

        XCTAssertEqual(try Subprocess.run(["chattr", "-R", "+i", copy]).status, 0)
        let withoutShm = EmbeddedStore(directory: copy)
        contract.assertThrows(.notAvailable, { _ = try withoutShm.search(ItemQuery(service: self.tag), loadBlobs: false) },
                              messageContains: "holds changes SQLite can read only with the -shm file")
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    // MARK: - concurrency and crashes

    func test_concurrentWriters_inSeparateConnections_allSucceed_andEachItemIsStoredOnce() throws {
        let writers = 4, perWriter = 25
        let failures = LockedList()
        let directory = self.directory, tag = self.tag
        DispatchQueue.concurrentPerform(iterations: writers) { w in
            let own = EmbeddedStore(directory: directory, deadline: .seconds(20))
            for i in 0..<perWriter {
                do {
                    try own.create(ItemAttributes(identity: .generic(service: tag, account: "w\(w)-\(i)")),
                                   blob: [UInt8(w), UInt8(i)], replace: false)
                    try own.create(ItemAttributes(identity: .generic(service: tag, account: "shared")),
                                   blob: [UInt8(w), UInt8(i)], replace: true)
                } catch {
                    failures.append("\(error)")
                }
            }
        }

        XCTAssertEqual(failures.items, [])
        XCTAssertEqual(try store.search(ItemQuery(service: tag), loadBlobs: false).count, writers * perWriter + 1)
        XCTAssertEqual(try store.integrityCheck(), "ok")
    }

    func test_killDashNine_duringWrites_losesNothing_andEachItemIsOldOrNew() throws {
        let rounds = Int(ProcessInfo.processInfo.environment["KEYGATE_KILL_ROUNDS"] ?? "") ?? 30
        try KillWriter.seed(store)
        var committed = [Int](repeating: 0, count: KillWriter.items)
        var killedMidWrite = 0
        for _ in 0..<rounds {
            let lines = try KillWriter.runAndKill(directory: directory, delayMilliseconds: Int.random(in: 5...150))
            for line in lines {
                let parts = line.split(separator: " ")
                if parts.count == 3, parts[0] == "committed", let item = Int(parts[1]), let gen = Int(parts[2]),
                   item < committed.count {
                    committed[item] = max(committed[item], gen)
                }
            }
            // After every kill: each item holds exactly the last committed value or the one being written.
            for item in 0..<KillWriter.items {
                let found = try store.search(ItemQuery(exactly: KillWriter.identity(item)), loadBlobs: true)
                XCTAssertEqual(found.count, 1, "item \(item)")
                let blob = try XCTUnwrap(found.first?.blob)
                let gen = try XCTUnwrap(KillWriter.generation(of: blob), "item \(item): a torn blob")
                XCTAssertTrue(gen == committed[item] || gen == committed[item] + 1,
                              "item \(item): read generation \(gen), last committed \(committed[item])")
                if gen == committed[item] + 1 { killedMidWrite += 1 }
                committed[item] = gen
            }
            XCTAssertEqual(try store.integrityCheck(), "ok")
        }
        XCTAssertGreaterThan(committed.reduce(0, +), rounds, "the writer made progress between kills")
        if ProcessInfo.processInfo.environment["KEYGATE_PROBE_VERBOSE"] == "1" {
            print("kill -9: \(rounds) rounds, generations \(committed), \(killedMidWrite) commits seen only after the kill")
        }
    }

    func test_warmGet_isFasterThanOneSecretToolLookup() throws {
        let median = try contract.medianWarmGet(warmUp: false)
        XCTAssertLessThan(median, .milliseconds(15), "median warm get \(median)")
        if ProcessInfo.processInfo.environment["KEYGATE_PROBE_VERBOSE"] == "1" { print("embedded median warm get: \(median)") }
    }
}

private final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
    var items: [String] { lock.lock(); defer { lock.unlock() }; return list }
}

/// The writer child of the kill -9 test, and the parent's means to start and kill it.
/// Each item's blob is its generation number repeated over 4 KiB (so a torn write would
/// show), and every write is a replace of one item with the next generation.
enum KillWriter {
    static let items = 5
    private static let variable = "KEYGATE_KILL_WRITER_DIR"

    static func identity(_ item: Int) -> ItemIdentity { .generic(service: "kg-kill", account: "item\(item)") }

    static func blob(generation: Int) -> [UInt8] {
        let word = withUnsafeBytes(of: UInt32(generation).littleEndian) { Array($0) }
        return Array((0..<1024).map { _ in word }.joined())
    }

    static func generation(of blob: [UInt8]) -> Int? {
        guard blob.count == 4096 else { return nil }
        let word = Array(blob[0..<4])
        for i in stride(from: 0, to: 4096, by: 4) where Array(blob[i..<i + 4]) != word { return nil }
        return Int(UInt32(word[0]) | UInt32(word[1]) << 8 | UInt32(word[2]) << 16 | UInt32(word[3]) << 24)
    }

    static func seed(_ store: EmbeddedStore) throws {
        for item in 0..<items {
            try store.create(ItemAttributes(identity: identity(item)), blob: blob(generation: 0), replace: false)
        }
    }

    /// Starts the writer, waits until it writes, sleeps `delayMilliseconds`, kills it with
    /// SIGKILL, and returns the lines it printed ("committed ITEM GEN" after each write).
    static func runAndKill(directory: String, delayMilliseconds: Int) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        process.arguments = ["KeygateIntegrationTests.EmbeddedStoreTests"]
        var env = ProcessInfo.processInfo.environment
        env[variable] = directory
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = pipe.fileHandleForReading
        var text = ""
        let started = Date()
        while !text.contains("ready\n"), Date().timeIntervalSince(started) < 30 {
            let data = handle.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        usleep(useconds_t(delayMilliseconds * 1000))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        text += String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n").map(String.init)
    }

    /// In the child: replace items with ever higher generations until killed.
    static func runIfRequested() {
        guard let directory = ProcessInfo.processInfo.environment[variable] else { return }
        let store = EmbeddedStore(directory: directory, deadline: .seconds(20))
        var generations = [Int](repeating: 0, count: items)
        for item in 0..<items {
            let blob = (try? store.search(ItemQuery(exactly: identity(item)), loadBlobs: true).first?.blob) ?? nil
            generations[item] = blob.flatMap(generation(of:)) ?? 0
        }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var item = 0
        while true {
            let next = generations[item] + 1
            do {
                try store.create(ItemAttributes(identity: identity(item)), blob: blob(generation: next), replace: true)
            } catch {
                FileHandle.standardOutput.write(Data("error \(error)\n".utf8))
                exit(1)
            }
            generations[item] = next
            FileHandle.standardOutput.write(Data("committed \(item) \(next)\n".utf8))
            item = (item + 1) % items
        }
    }
}
