// A read needs no write: with the data folder immutable (`chattr -R +i`, as root: EPERM for
// every write, even root's) or mounted read-only (a read-only bind mount in a private mount
// namespace: EROFS), the real `keygate`, run as a real user, reads an `--access none` item from
// either store, on a locked keychain (the password unlock writes nothing there) and then on the
// unlocked one; `list` and `exists` answer; and a write fails saying the folder is read-only,
// and where. Nothing is lost once the folder is writable again.
import Foundation
import KeygateTestSupport
import XCTest

final class ReadOnlyStoreTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself

    /// The script run as the user once the folder is read-only: a read locked, a read unlocked,
    /// list, exists, then a write.
    private static let reads = """
        touch "$HOME/.local/share/keygate/probe" 2>/dev/null; echo writable=$?
        n0=$(wc -l < "$HOME/prompts")
        echo locked=$(keygate get -s ro -a plain 2>"$HOME/e1"); echo lockedStatus=$?; cat "$HOME/e1" >&2
        echo unlocked=$(keygate get -s ro -a plain 2>"$HOME/e2"); echo unlockedStatus=$?; cat "$HOME/e2" >&2
        echo prompts=$(( $(wc -l < "$HOME/prompts") - n0 ))
        keygate list -s ro 2>&1 | grep -c 'service: ro' | sed 's/^/listed=/'
        keygate exists -s ro -a plain; echo exists=$?
        printf %s n | keygate add -s ro -a new --access none 2>"$HOME/e3"; echo add=$?
        echo addmsg=$(tr '\\n' ' ' < "$HOME/e3")
        """

    private func made(_ h: CLIUserHarness, store: String) throws {
        let r = try h.run("""
            export KEYGATE_STORE=\(store)
            printf %s ro-plain | keygate add -s ro -a plain --access none && keygate lock --all
            """)
        XCTAssertEqual(r.status, 0, r.summary)
    }

    private func assertReadsWork(_ r: ProcessResult, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let v = r.values
        XCTAssertEqual(v["writable"], "1", "\(what): the folder is read-only: \(r.summary)", file: file, line: line)
        XCTAssertEqual(v["locked"], "ro-plain", "\(what): a locked read unlocks and reads, writing nothing: \(r.summary)", file: file, line: line)
        XCTAssertEqual(v["unlocked"], "ro-plain", "\(what): the unlocked read: \(r.summary)", file: file, line: line)
        XCTAssertEqual(v["prompts"], "1", "\(what): one password, then the cached key: \(r.summary)", file: file, line: line)
        XCTAssertEqual(v["listed"], "1", "\(what): \(r.summary)", file: file, line: line)
        XCTAssertEqual(v["exists"], "0", "\(what): \(r.summary)", file: file, line: line)
    }

    func test_immutableDataFolder_embeddedStore_readsWork_andAWriteSaysTheFolderIsReadOnly() throws {
        let h = try CLIUserHarness()
        try made(h, store: "embedded")
        defer { _ = try? Subprocess.run(["chattr", "-R", "-i", h.user.home + "/.local/share/keygate"], environment: rootToolEnvironment) }
        let r = try h.runWithMounts("chattr -R +i \"$D\"", "export KEYGATE_STORE=embedded\n" + Self.reads)
        assertReadsWork(r, "immutable, embedded")
        XCTAssertEqual(r.values["add"], "53", r.summary)
        let folder = h.user.home + "/.local/share/keygate"
        XCTAssertTrue(r.values["addmsg"]?.contains("cannot write the embedded store \(folder)/items.sqlite: the folder \(folder) is read-only: "
                                                   + "it or the file is immutable (lsattr shows the i flag; chattr -i removes it)") ?? false,
                      r.summary)
        _ = try Subprocess.run(["chattr", "-R", "-i", folder], environment: rootToolEnvironment)
        let after = try h.run("export KEYGATE_STORE=embedded; printf %s n | keygate add -s ro -a new --access none; echo add=$?; echo v=$(keygate get -s ro -a plain)")
        XCTAssertEqual(after.values["add"], "0", after.summary)
        XCTAssertEqual(after.values["v"], "ro-plain", "nothing lost: \(after.summary)")
    }

    func test_immutableDataFolder_secretService_readsWork() throws {
        let h = try CLIUserHarness()
        try made(h, store: "secret-service")
        defer { _ = try? Subprocess.run(["chattr", "-R", "-i", h.user.home + "/.local/share/keygate"], environment: rootToolEnvironment) }
        let r = try h.runWithMounts("chattr -R +i \"$D\"", "export KEYGATE_STORE=secret-service\n" + Self.reads)
        assertReadsWork(r, "immutable, Secret Service")
        XCTAssertEqual(r.values["add"], "0", "the items live in the Secret Service: \(r.summary)")
    }

    func test_readOnlyBindMountOfTheDataFolder_embeddedStore_readsWork_andAWriteSaysTheMountIsReadOnly() throws {
        let h = try CLIUserHarness()
        try made(h, store: "embedded")
        let r = try h.runWithMounts("mount --bind \"$D\" \"$D\" && mount -o remount,bind,ro \"$D\"",
                                    "export KEYGATE_STORE=embedded\n" + Self.reads)
        assertReadsWork(r, "read-only mount, embedded")
        XCTAssertEqual(r.values["add"], "53", r.summary)
        XCTAssertTrue(r.values["addmsg"]?.contains("the folder \(h.user.home)/.local/share/keygate is read-only: the file system is read-only. "
                                                   + "Reads still work") ?? false, r.summary)
    }
}
