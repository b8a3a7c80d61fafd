// keygate-secret-service with real clients, as a real user: each test runs one script as a fresh
// (pooled) account inside scripts/keygate-secret-session, a private session bus on which the
// built keygate-secret-service is the only provider (no service folders: nothing else can be
// activated, and no gnome-keyring runs), after `keygate init` made the keychain on the embedded
// store through real PAM (pam_unix) and cached its master key in the kernel keyring. The clients
// are the real ones: secret-tool, python SecretStorage (over `plain` and the DH session),
// python keyring's SecretService backend, libsecret's C API compiled here, and
// git-credential-libsecret built from git's contrib.
//
// Not in the embedded-store pass: these tests choose their store and bus themselves.
import Foundation
import KeygateTestSupport
import XCTest

final class SecretServiceDaemonTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus

    /// The keychain, made and unlocked for the script (askpass answers the password).
    static let initKeychain = "KEYGATE_STORE=embedded keygate init </dev/null >/dev/null 2>\"$HOME/init.err\" || { echo init-failed; cat \"$HOME/init.err\"; }"

    private func harness() throws -> CLIUserHarness {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.secretServiceBinary),
                                "the built keygate-secret-service at \(PackagePaths.secretServiceBinary) (run swift build)")
        for tool in ["/usr/bin/secret-tool", "/usr/bin/dbus-daemon", "/usr/bin/dbus-send", "/usr/bin/python3", "/usr/bin/keyctl"] {
            try Requirement.require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) (scripts/install-deps)")
        }
        return try CLIUserHarness(sharedUser: true)
    }

    /// Runs `script` in a keygate-secret-session as the harness's user, after the keychain is made.
    private func run(_ h: CLIUserHarness, _ script: String, askpassForDaemon: Bool = true,
                     timeout: TimeInterval = 180) throws -> ProcessResult {
        let body = "export KEYGATE_STORE=embedded\n" + (askpassForDaemon ? Self.initKeychain
            : "KEYGATE_ASKPASS=\"$HOME/askpass\" " + Self.initKeychain) + "\n" + script
            + "\necho daemon-alive=$(kill -0 \"$KEYGATE_SECRET_SERVICE_PID\" 2>/dev/null && echo yes || echo no)"
            + "\necho '--- daemon log'; cat \"$KEYGATE_SECRET_SESSION_DIR/daemon.log\""
        return try h.run(body, askpass: askpassForDaemon, timeout: timeout, session: "keygate-secret-session")
    }

    // MARK: secret-tool

    func test_secretTool_storeLookupSearchClear_andLockThenUnlockThroughThePrompt() throws {
        let h = try harness()
        let r = try run(h, """
            printf %s 'tool-secret-1' | secret-tool store --label='Tool item' app kg-tool user alice; echo store=$?
            echo lookup=$(secret-tool lookup app kg-tool)
            secret-tool search --all --unlock app kg-tool > "$HOME/search" 2>&1; echo search=$?
            echo searchSecret=$(grep -c '^secret = tool-secret-1$' "$HOME/search")
            echo searchLabel=$(grep -c '^label = Tool item$' "$HOME/search")
            echo searchAttr=$(grep -c '^attribute.user = alice$' "$HOME/search")
            # secret-tool lock crashes in its own cleanup (libsecret 0.20.5; the same against gnome-keyring)
            # after the collection is locked: the state is what counts.
            ( timeout 4 dbus-monitor "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'" \
                > "$HOME/monitor" 2>&1 & ); sleep 0.5
            secret-tool lock --collection=login >/dev/null 2>&1; true
            sleep 1.5; echo lockSignal=$(grep -A3 'string "Locked"' "$HOME/monitor" | grep -c 'boolean true')
            echo lockedProp=$(dbus-send --print-reply=literal --dest=org.freedesktop.secrets /org/freedesktop/secrets/collection/login \\
                org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Locked | awk '{print $NF}')
            echo statusAfterLock=$(keygate status | grep -c 'state: locked')
            echo prompts-before=$(wc -l < "$HOME/prompts")
            echo lookupAfterLock=$(secret-tool lookup app kg-tool)
            echo prompts-after=$(wc -l < "$HOME/prompts")
            echo statusAfterUnlock=$(keygate status | grep -c 'state: unlocked')
            secret-tool clear app kg-tool; echo clear=$?
            echo lookupAfterClear=[$(secret-tool lookup app kg-tool)]
            """)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        r.assertValues([
            "store": "0", "lookup": "tool-secret-1", "search": "0", "searchSecret": "1", "searchLabel": "1", "searchAttr": "1",
        ])
        XCTAssertEqual(v["lockedProp"], "true", "secret-tool lock locks the keychain: \(r.summary)")
        XCTAssertEqual(v["statusAfterLock"], "1", "the collection's lock is the keychain's: \(r.summary)")
        XCTAssertEqual(v["lockSignal"], "1", "PropertiesChanged says Locked: \(r.summary)")
        XCTAssertEqual(v["lookupAfterLock"], "tool-secret-1", "a lookup of a locked item unlocks through the prompt: \(r.summary)")
        XCTAssertEqual((Int(v["prompts-after"] ?? "") ?? 0) - (Int(v["prompts-before"] ?? "") ?? 0), 1,
                       "the prompt asked for the password once: \(r.summary)")
        r.assertValues(["statusAfterUnlock": "1", "clear": "0", "lookupAfterClear": "[]", "daemon-alive": "yes"])
    }

    func test_aLockedCollection_withNoWayToAsk_isDismissedAtOnce_neverAHang() throws {
        let h = try harness()
        let r = try run(h, """
            printf %s 'quiet-secret' | secret-tool store --label=q app kg-quiet; echo store=$?
            keygate lock >/dev/null 2>&1
            start=$(date +%s%N)
            echo lookup=[$(timeout 20 secret-tool lookup app kg-quiet)]
            echo ms=$(( ($(date +%s%N) - start) / 1000000 ))
            echo statusLocked=$(keygate status | grep -c 'state: locked')
            echo prompts=$(wc -l < "$HOME/prompts")
            """, askpassForDaemon: false)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["store"], "0", r.summary)
        XCTAssertEqual(v["lookup"], "[]", "nothing could ask: no secret: \(r.summary)")
        XCTAssertLessThan(Int(v["ms"] ?? "") ?? 99999, 5000, "dismissed at once, not after a timeout: \(r.summary)")
        XCTAssertEqual(v["statusLocked"], "1", r.summary)
        XCTAssertEqual(v["prompts"], "1", "only keygate init asked: \(r.summary)")
        XCTAssertEqual(v["daemon-alive"], "yes", r.summary)
    }

    func test_itNeverTakesTheNameUnlessAsked_andReplaceTakesItFromAnotherThatAllowsIt() throws {
        let h = try harness()
        let r = try run(h, """
            owner() { dbus-send --print-reply=literal --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID \\
                string:org.freedesktop.secrets | awk '{print $NF}'; }
            first=$(owner)
            "$KEYGATE_SECRET_SERVICE" 2>"$HOME/second.err"; echo second=$?
            echo secondSays=$(grep -c 'another Secret Service provider owns' "$HOME/second.err")
            echo sameOwner=$([ "$(owner)" = "$first" ] && echo yes)
            "$KEYGATE_SECRET_SERVICE" --replace 2>"$HOME/third.err" & third=$!
            for i in $(seq 100); do [ "$(owner)" = "$third" ] && break; sleep 0.05; done
            echo replaced=$([ "$(owner)" = "$third" ] && echo yes)
            for i in $(seq 100); do kill -0 "$first" 2>/dev/null || break; sleep 0.05; done
            echo firstLeft=$(kill -0 "$first" 2>/dev/null && echo no || echo yes)
            echo firstSays=$(grep -c 'took org.freedesktop.secrets: leaving' "$KEYGATE_SECRET_SESSION_DIR/daemon.log")
            printf %s after-replace | secret-tool store --label=r app kg-replace; echo lookup=$(secret-tool lookup app kg-replace)
            kill "$third"
            """)
        let v = r.values
        XCTAssertEqual(v["second"], "3", "a second daemon does not take the name: \(r.summary)")
        XCTAssertEqual(v["secondSays"], "1", r.summary)
        XCTAssertEqual(v["sameOwner"], "yes", r.summary)
        XCTAssertEqual(v["replaced"], "yes", "--replace takes it: \(r.summary)")
        XCTAssertEqual(v["firstLeft"], "yes", "the daemon that lost the name leaves: \(r.summary)")
        XCTAssertEqual(v["firstSays"], "1", r.summary)
        XCTAssertEqual(v["lookup"], "after-replace", r.summary)
    }

    /// A client told "locked" refuses to write or asks the person again: the daemon never
    /// answers "locked" from an old look once the keychain is open. A poller keeps the daemon
    /// looking every few milliseconds, so an answer from a look up to 100 ms old would show.
    /// (A lock shows within that 100 ms: nothing opens after it whatever a client was told.)
    func test_theLockedProperty_isNeverStale_rightAfterAnUnlock() throws {
        let h = try harness()
        let r = try run(h, """
            locked() { dbus-send --print-reply=literal --dest=org.freedesktop.secrets /org/freedesktop/secrets/collection/login \
                org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Locked | awk '{print $NF}'; }
            ( while :; do locked >/dev/null 2>&1; sleep 0.005; done ) & poller=$!
            stale=0
            for i in 1 2 3 4 5 6 7 8; do
                keygate lock >/dev/null 2>&1; sleep 0.15
                [ "$(locked)" = true ] || echo "notLocked$i=yes"
                keygate unlock </dev/null >/dev/null 2>"$HOME/unlock.err" || { echo "unlockFailed$i=yes"; cat "$HOME/unlock.err"; }
                [ "$(locked)" = false ] || stale=$((stale + 1))
            done
            kill "$poller"
            echo stale=$stale
            """)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertFalse(r.out.contains("notLocked"), "a lock shows within 100 ms: \(r.summary)")
        XCTAssertFalse(r.out.contains("unlockFailed"), r.summary)
        XCTAssertEqual(v["stale"], "0", "Locked read right after keygate unlock: \(r.summary)")
    }

    /// The store's file made again under a running daemon (a restore, or a keychain removed and
    /// made anew): the daemon opens the new file and makes its tables there, without a restart.
    func test_aStoreFileMadeAgain_underARunningDaemon_servesClientsAtOnce() throws {
        let h = try harness()
        let r = try run(h, """
            printf %s before | secret-tool store --label=b app kg-again; echo before=$(secret-tool lookup app kg-again)
            rm -rf "$HOME/.local/share/keygate"; keygate lock --all >/dev/null 2>&1
            KEYGATE_STORE=embedded keygate init </dev/null >/dev/null 2>"$HOME/init2.err" || { echo init2-failed; cat "$HOME/init2.err"; }
            sleep 0.2
            printf %s after | secret-tool store --label=a app kg-again 2>"$HOME/store.err"; echo store=$?; cat "$HOME/store.err"
            echo after=$(secret-tool lookup app kg-again)
            """)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertNil(v["init2-failed"], r.summary)
        XCTAssertEqual(v["before"], "before", r.summary)
        XCTAssertEqual(v["store"], "0", "the new file gets the daemon's tables: \(r.summary)")
        XCTAssertEqual(v["after"], "after", r.summary)
    }

    // MARK: python

    /// SecretStorage's own DH session, and a plain one opened by hand over jeepney.
    static let secretStorageScript = #"""
        import secretstorage, sys
        from jeepney import new_method_call, DBusAddress
        from jeepney.io.blocking import open_dbus_connection
        conn = secretstorage.dbus_init()
        col = secretstorage.get_default_collection(conn)
        print("locked=%s" % col.is_locked())
        item = col.create_item("py label", {"kgpy": "1", "service": "python-svc"}, b"dh-secret-\x00\xff", replace=True)
        print("dhSecret=%s" % (item.get_secret() == b"dh-secret-\x00\xff"))
        print("found=%d" % len(list(col.search_items({"kgpy": "1"}))))
        item.set_label("py label 2"); print("label=%s" % item.get_label())
        item.set_attributes({"kgpy": "2"}); print("attrs=%s" % sorted(item.get_attributes().items()))
        item.set_secret(b"second"); print("dhSecret2=%s" % item.get_secret().decode())
        print("contentType=%s" % item.get_secret_content_type())
        # plain, by hand: OpenSession("plain"), then GetSecret over it
        raw = open_dbus_connection(bus="SESSION")
        service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Service")
        reply = raw.send_and_get_reply(new_method_call(service, "OpenSession", "sv", ("plain", ("s", ""))))
        session = reply.body[1]
        it = DBusAddress(item.item_path, bus_name="org.freedesktop.secrets", interface="org.freedesktop.Secret.Item")
        secret = raw.send_and_get_reply(new_method_call(it, "GetSecret", "o", (session,))).body[0]
        print("plainParams=%d plainSecret=%s" % (len(secret[1]), bytes(secret[2]).decode()))
        item.delete(); print("afterDelete=%d" % len(list(col.search_items({"kgpy": "2"}))))
        """#

    func test_pythonSecretStorage_overTheDHSession_andAPlainOne() throws {
        let h = try harness()
        try h.writeUserFile("ss.py", Self.secretStorageScript, mode: 0o600)
        let r = try run(h, "/usr/bin/python3 \"$HOME/ss.py\" 2>&1")
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["locked"], "False", r.summary)
        XCTAssertEqual(v["dhSecret"], "True", "binary bytes round-trip over the DH session: \(r.summary)")
        r.assertValues([
            "found": "1", "label": "py label 2", "attrs": "[('kgpy', '2')]", "dhSecret2": "second", "contentType": "text/plain",
        ])
        XCTAssertTrue(r.out.contains("plainParams=0 plainSecret=second"), r.summary)
        XCTAssertEqual(v["afterDelete"], "0", r.summary)
    }

    /// Collections clients create are kept (sealed like the rest) until deleted; the `session`
    /// collection lives in memory only: a new daemon on the same keychain has none of its items.
    func test_createdCollections_persist_andTheSessionCollection_livesInMemoryOnly() throws {
        let h = try harness()
        try h.writeUserFile("col.py", """
            import secretstorage, sys
            conn = secretstorage.dbus_init()
            step = sys.argv[1]
            if step == "make":
                work = secretstorage.create_collection(conn, "Work things", alias="work")
                print("workPath=%s" % work.collection_path)
                work.create_item("w", {"kgcol": "1"}, b"in-work")
                session = secretstorage.Collection(conn, "/org/freedesktop/secrets/aliases/session")
                session.create_item("s", {"kgcol": "2"}, b"in-memory")
                print("sessionNow=%d" % len(list(session.search_items({"kgcol": "2"}))))
            else:
                work = secretstorage.get_collection_by_alias(conn, "work")
                print("workLabel=%s" % work.get_label())
                print("workItem=%s" % [i.get_secret().decode() for i in work.search_items({"kgcol": "1"})])
                print("sessionAfter=%d" % len(list(secretstorage.search_items(conn, {"kgcol": "2"}))))
                work.delete()
                print("afterDelete=%d" % len(list(secretstorage.search_items(conn, {"kgcol": "1"}))))
            """, mode: 0o600)
        let r = try run(h, """
            /usr/bin/python3 "$HOME/col.py" make 2>&1
            kill "$KEYGATE_SECRET_SERVICE_PID"; for i in $(seq 100); do kill -0 "$KEYGATE_SECRET_SERVICE_PID" 2>/dev/null || break; sleep 0.05; done
            "$KEYGATE_SECRET_SERVICE" >>"$KEYGATE_SECRET_SESSION_DIR/daemon.log" 2>&1 & export KEYGATE_SECRET_SERVICE_PID=$!
            for i in $(seq 100); do dbus-send --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
                string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true' && break; sleep 0.05; done
            /usr/bin/python3 "$HOME/col.py" check 2>&1
            """)
        let v = r.values
        XCTAssertEqual(v["workPath"], "/org/freedesktop/secrets/collection/work_things", r.summary)
        XCTAssertEqual(v["sessionNow"], "1", r.summary)
        XCTAssertEqual(v["workLabel"], "Work things", "a created collection outlives the daemon: \(r.summary)")
        XCTAssertEqual(v["workItem"], "['in-work']", r.summary)
        XCTAssertEqual(v["sessionAfter"], "0", "the session collection was in memory only: \(r.summary)")
        XCTAssertEqual(v["afterDelete"], "0", "deleting a collection deletes its items: \(r.summary)")
    }

    func test_pythonKeyring_secretServiceBackend() throws {
        let h = try harness()
        try h.writeUserFile("kr.py", """
            import keyring
            from keyring.backends import SecretService
            keyring.set_keyring(SecretService.Keyring())
            keyring.set_password("kg-keyring", "alice", "kr-secret")
            print("get=%s" % keyring.get_password("kg-keyring", "alice"))
            keyring.set_password("kg-keyring", "alice", "kr-secret-2")
            print("get2=%s" % keyring.get_password("kg-keyring", "alice"))
            keyring.delete_password("kg-keyring", "alice")
            print("gone=%s" % keyring.get_password("kg-keyring", "alice"))
            """, mode: 0o600)
        let r = try run(h, "/usr/bin/python3 \"$HOME/kr.py\" 2>&1")
        r.assertValues(["get": "kr-secret", "get2": "kr-secret-2", "gone": "None"])
    }

    // MARK: C clients

    /// A folder the user can read, holding programs compiled here.
    private func compiledClients() throws -> String {
        let dir = NSTemporaryDirectory() + "kg-ss-clients-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let pc = try Subprocess.run(["pkg-config", "--cflags", "--libs", "libsecret-1"])
        try Requirement.require(pc.status == 0, "libsecret's headers (apt-get install libsecret-1-dev pkg-config)")
        let flags = pc.out.split(whereSeparator: \.isWhitespace).map(String.init)
        try """
            #include <libsecret/secret.h>
            #include <stdio.h>
            #include <string.h>
            static const SecretSchema schema = { "io.keygate.Test", SECRET_SCHEMA_NONE,
              { { "app", SECRET_SCHEMA_ATTRIBUTE_STRING }, { "n", SECRET_SCHEMA_ATTRIBUTE_INTEGER }, { NULL, 0 } } };
            int main(int argc, char **argv) {
              GError *error = NULL;
              if (argc > 2 && strcmp(argv[1], "store") == 0) {
                if (!secret_password_store_sync(&schema, SECRET_COLLECTION_DEFAULT, "C label", argv[2], NULL, &error,
                                                "app", "kg-c", "n", 7, NULL)) {
                  fprintf(stderr, "store: %s\\n", error ? error->message : "?"); return 1;
                }
                return 0;
              }
              gchar *pw = secret_password_lookup_sync(&schema, NULL, &error, "app", "kg-c", "n", 7, NULL);
              if (error) { fprintf(stderr, "lookup: %s\\n", error->message); return 1; }
              printf("%s\\n", pw ? pw : "(none)");
              secret_password_free(pw);
              return 0;
            }
            """.write(toFile: dir + "/pw.c", atomically: true, encoding: .utf8)
        let cc = try Subprocess.run(["/usr/bin/gcc", "-o", dir + "/pw", dir + "/pw.c"] + flags)
        XCTAssertEqual(cc.status, 0, cc.err)
        // git-credential-libsecret, built from git's contrib with its own Makefile.
        let contrib = "/usr/share/doc/git/contrib/credential/libsecret"
        try Requirement.require(FileManager.default.fileExists(atPath: contrib + "/Makefile"), "git's contrib (apt-get install git)")
        try FileManager.default.copyItem(atPath: contrib, toPath: dir + "/git")
        let make = try Subprocess.run(["make", "-C", dir + "/git"])
        XCTAssertEqual(make.status, 0, make.err)
        _ = try Subprocess.run(["chmod", "-R", "a+rX", dir])
        return dir
    }

    func test_libsecretCAPI_andGitCredentialLibsecret() throws {
        let h = try harness()
        let dir = try compiledClients()
        let r = try run(h, """
            \(dir)/pw store c-secret-1; echo cstore=$?
            echo clookup=$(\(dir)/pw)
            printf 'protocol=https\\nhost=git.example.com\\nusername=bob\\npassword=git-secret-1\\n\\n' | \(dir)/git/git-credential-libsecret store; echo gstore=$?
            printf 'protocol=https\\nhost=git.example.com\\n\\n' | \(dir)/git/git-credential-libsecret get > "$HOME/git-out"; echo gget=$?
            echo gpassword=$(grep '^password=' "$HOME/git-out" | cut -d= -f2)
            echo gusername=$(grep '^username=' "$HOME/git-out" | cut -d= -f2)
            printf 'protocol=https\\nhost=git.example.com\\nusername=bob\\n\\n' | \(dir)/git/git-credential-libsecret erase; echo gerase=$?
            printf 'protocol=https\\nhost=git.example.com\\n\\n' | \(dir)/git/git-credential-libsecret get > "$HOME/git-out2"; echo gafter=[$(cat "$HOME/git-out2")]
            """)
        r.assertValues([
            "cstore": "0", "clookup": "c-secret-1", "gstore": "0", "gget": "0", "gpassword": "git-secret-1", "gusername": "bob",
            "gerase": "0", "gafter": "[]",
        ])
    }

    // MARK: one keychain, two doors

    func test_theCLIsItems_andTheClientsItems_areOneKeychain_withNoPlaintextInTheFile() throws {
        let h = try harness()
        let r = try run(h, """
            printf %s 'CLI-PLAINTEXT-7f3a' | keygate add -s kg-cli -a alice --access none >/dev/null 2>&1; echo add=$?
            echo viaTool=$(secret-tool lookup service kg-cli account alice)
            printf %s 'TOOL-PLAINTEXT-91bc' | secret-tool store --label='TOOL-LABEL-x1' app kg-one; echo store=$?
            echo viaTool2=$(secret-tool lookup app kg-one)
            echo cliGet=$(keygate get -s kg-cli -a alice)
            echo cliLookup=$(keygate lookup app kg-one)
            db="$HOME/.local/share/keygate/items.sqlite"
            echo dbExists=$(test -f "$db" && echo yes)
            echo plainCLI=$(cat "$db"* | grep -ac 'CLI-PLAINTEXT-7f3a')
            echo plainTool=$(cat "$db"* | grep -ac 'TOOL-PLAINTEXT-91bc')
            keygate lock >/dev/null 2>&1
            echo lockedLookup=[$(KEYGATE_ASKPASS= secret-tool lookup app kg-one 2>/dev/null)]
            """, askpassForDaemon: false)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["viaTool"], "CLI-PLAINTEXT-7f3a", "an item the CLI made is read through the Secret Service: \(r.summary)")
        r.assertValues(["store": "0", "viaTool2": "TOOL-PLAINTEXT-91bc", "cliGet": "CLI-PLAINTEXT-7f3a"])
        XCTAssertEqual(v["cliLookup"], "TOOL-PLAINTEXT-91bc", "the CLI reads a client's item from the same file: \(r.summary)")
        XCTAssertEqual(v["dbExists"], "yes", r.summary)
        XCTAssertEqual(v["plainCLI"], "0", "the database holds no plaintext secret: \(r.summary)")
        XCTAssertEqual(v["plainTool"], "0", "the database holds no plaintext secret: \(r.summary)")
        XCTAssertEqual(v["lockedLookup"], "[]", "keygate lock closes the collection: \(r.summary)")
    }
}
