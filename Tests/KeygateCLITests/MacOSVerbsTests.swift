// The macOS security(1) verbs, driven through the built binary as a real
// user: find-*-password's attribute block and -g's `password:` line, dump-keychain
// (with -d reading through each item's access control), delete-*-password printing
// what it deleted, and lock-keychain / unlock-keychain. The expected blocks are
// macOS's format: the fields, types and order `security` prints on a Mac, with values
// as print_buffer in Apple's security tool (keychain_utilities.c) prints them.
import Foundation
import KeygateTestSupport
import XCTest

final class MacOSVerbsTests: XCTestCase {
    /// The timedate lines hold the item's times; replaced here by a fixed value once
    /// checked to be macOS's shape (0x hex of "YYYYMMDDhhmmssZ\0", then the quoted form).
    private func normalizingTimes(_ text: String) -> String {
        let pattern = #"<timedate>=0x[0-9A-F]{32}  "\d{14}Z\\000""#
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return text }
        return regex.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: "<timedate>=TIME")
    }

    /// Keygate's default label is service/account, so the label lines are never <NULL>.
    private func genericBlock(_ home: String, service: String, account: String, label: String? = nil,
                              comment: String? = nil) -> String {
        let l = "\"" + (label ?? "\(service)/\(account)") + "\""
        return """
            keychain: "\(home)/.local/share/keygate"
            version: 512
            class: "genp"
            attributes:
                0x00000007 <blob>=\(l)
                0x00000008 <blob>=<NULL>
                "acct"<blob>="\(account)"
                "cdat"<timedate>=TIME
                "crtr"<uint32>=<NULL>
                "cusi"<sint32>=<NULL>
                "desc"<blob>=<NULL>
                "gena"<blob>=<NULL>
                "icmt"<blob>=\(comment.map { "\"\($0)\"" } ?? "<NULL>")
                "invi"<sint32>=<NULL>
                "mdat"<timedate>=TIME
                "nega"<sint32>=<NULL>
                "prot"<blob>=<NULL>
                "scrp"<sint32>=<NULL>
                "svce"<blob>="\(service)"
                "type"<uint32>=<NULL>

            """
    }

    func test_findGenericPassword_printsMacOSAttributeBlock_andMinusG_putsPasswordOnStderr() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s 'pa"ss\\' | keygate add-generic-password -s vpn -a alice -l 'VPN' -j 'work vpn'; echo add=$?
            echo '--- find'
            keygate find-generic-password -s vpn -a alice; echo find=$?
            echo '--- g'
            keygate find-generic-password -s vpn -a alice -g 2>"$HOME/g.err"; echo g=$?
            echo '--- gerr'
            cat "$HOME/g.err"
            echo '--- end'
            """)
        r.assertValues(["add": "0", "find": "0", "g": "0"])
        let out = normalizingTimes(r.out)
        let block = genericBlock(h.user.home, service: "vpn", account: "alice", label: "VPN", comment: "work vpn")
        XCTAssertTrue(out.contains("--- find\n" + block + "find=0\n"), out)
        let stdoutPart = out.components(separatedBy: "--- gerr").first ?? ""
        XCTAssertFalse(stdoutPart.contains("pa\"ss"), "no secret on stdout, with or without -g: \(out)")
        XCTAssertTrue(out.contains("--- g\n" + block + "g=0\n"), "-g prints the same block on stdout: \(out)")
        // As print_buffer: a backslash is not printable there, so the value is hex, then the
        // quoted form with the backslash as \134; a quote stays as it is.
        XCTAssertTrue(out.contains("--- gerr\npassword: 0x70612273735C  \"pa\"ss\\134\"\n--- end"), out)
    }

    func test_findGenericPasswordMinusG_printsBinarySecretInHex_asMacOSDoes() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf 'a\\001\\377' | keygate add -s bin -a alice; echo add=$?
            printf '\\001\\002' | keygate add -s raw -a alice; echo add2=$?
            keygate find-generic-password -s bin -a alice -g 2>&1 >/dev/null | sed 's/^/bin:/'
            keygate find-generic-password -s raw -a alice -g 2>&1 >/dev/null | sed 's/^/raw:/'
            """)
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertEqual(r.values["add2"], "0", r.summary)
        // Some printable bytes: hex, two spaces, then the quoted form with octal escapes.
        XCTAssertTrue(r.out.contains("bin:password: 0x6101FF  \"a\\001\\377\"\n"), r.summary)
        // No printable byte: hex only, and print_buffer's single trailing space.
        XCTAssertTrue(r.out.contains("raw:password: 0x0102 \n"), r.summary)
    }

    func test_findInternetPassword_printsInetBlock_withProtocolPortAndServer() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s ipw | keygate add-internet-password -s example.com -a carol -r https -P 8443 -p /login; echo add=$?
            keygate find-internet-password -s example.com -a carol -r https -P 8443 -p /login; echo find=$?
            """)
        XCTAssertEqual(r.values["find"], "0", r.summary)
        let expected = """
            class: "inet"
            attributes:
                0x00000007 <blob>="example.com/carol"
                0x00000008 <blob>=<NULL>
                "acct"<blob>="carol"
                "atyp"<blob>="dflt"
                "cdat"<timedate>=TIME
                "crtr"<uint32>=<NULL>
                "cusi"<sint32>=<NULL>
                "desc"<blob>=<NULL>
                "icmt"<blob>=<NULL>
                "invi"<sint32>=<NULL>
                "mdat"<timedate>=TIME
                "nega"<sint32>=<NULL>
                "path"<blob>="/login"
                "port"<uint32>=0x000020FB  "\\000\\000 \\373"
                "prot"<blob>=<NULL>
                "ptcl"<uint32>="htps"
                "scrp"<sint32>=<NULL>
                "sdmn"<blob>=<NULL>
                "srvr"<blob>="example.com"
                "type"<uint32>=<NULL>
            find=0
            """
        XCTAssertTrue(normalizingTimes(r.out).contains(expected), r.summary)
    }

    func test_deleteGenericPassword_printsWhatWasDeleted_andPasswordHasBeenDeletedOnStderr() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s pw | keygate add -s mail -a bob; echo add=$?
            echo '--- del'
            keygate delete-generic-password -s mail -a bob 2>"$HOME/del.err"; echo del=$?
            printf 'delerr=%s\\n' "$(cat "$HOME/del.err")"
            keygate delete-generic-password -s mail -a bob 2>/dev/null; echo again=$?
            keygate exists -s mail -a bob; echo exists=$?
            """)
        let out = normalizingTimes(r.out)
        XCTAssertTrue(out.contains("--- del\n" + genericBlock(h.user.home, service: "mail", account: "bob")
                                   + "del=0\n"), r.summary)
        XCTAssertEqual(r.values["delerr"], "password has been deleted.", "on stderr, as macOS: \(r.summary)")
        XCTAssertFalse(out.contains("pw\n"), "the secret is not printed")
        XCTAssertEqual(r.values["again"], "44", r.summary)
        XCTAssertEqual(r.values["exists"], "44", r.summary)
    }

    func test_dumpKeychain_printsEveryItemsAttributes_neverASecret() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s s3cret1 | keygate add -s one -a alice; echo add1=$?
            printf %s s3cret2 | keygate add-internet-password -s example.com -a bob; echo add2=$?
            keygate lock --all
            : > "$HOME/prompts"
            keygate dump-keychain; echo dump=$?
            echo prompts=$(wc -l < "$HOME/prompts")
            """)
        XCTAssertEqual(r.values["dump"], "0", r.summary)
        XCTAssertEqual(r.values["prompts"], "0", "attributes only: no prompt, even when locked")
        let out = normalizingTimes(r.out)
        XCTAssertTrue(out.contains(genericBlock(h.user.home, service: "one", account: "alice")), out)
        XCTAssertTrue(out.contains("class: \"inet\"\n"), out)
        XCTAssertTrue(out.contains("    \"srvr\"<blob>=\"example.com\"\n"), out)
        XCTAssertFalse(out.contains("s3cret"), "no secret without -d: \(out)")
        XCTAssertFalse(out.contains("data:"), out)
    }

    func test_dumpKeychainMinusD_printsData_afterTheAuthenticationEachItemNeeds() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s plain1 | keygate add -s one -a alice; echo add1=$?
            printf %s b4nk | keygate add -s bank -a alice --access user-presence; echo add2=$?
            keygate lock --all
            : > "$HOME/prompt-texts"
            keygate dump-keychain -d; echo dump=$?
            """)
        XCTAssertEqual(r.values["dump"], "0", r.summary)
        let out = normalizingTimes(r.out)
        XCTAssertTrue(out.contains("    \"svce\"<blob>=\"one\"\n    \"type\"<uint32>=<NULL>\ndata:\n\"plain1\"\n"), out)
        XCTAssertTrue(out.contains("    \"svce\"<blob>=\"bank\"\n    \"type\"<uint32>=<NULL>\ndata:\n\"b4nk\"\n"), out)
        let texts = h.prompts()
        XCTAssertTrue(texts.contains("Password for \(h.user.name):"), "the locked keychain asks for the password: \(texts)")
        XCTAssertTrue(texts.contains("confidential information stored in \"bank\""),
                      "the presence item asks for its presence check: \(texts)")
    }

    func test_dumpKeychainMinusD_canceled_printsNoSecret() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s plain1 | keygate add -s one -a alice >/dev/null 2>&1; echo add=$?
            keygate lock --all
            keygate --askpass /bin/false dump-keychain -d; echo dump=$?
            """)
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertNotEqual(r.values["dump"], "0", r.summary)
        XCTAssertFalse(r.out.contains("plain1"), r.summary)
    }

    func test_lockKeychain_andUnlockKeychain_areLockAndUnlock_withMacOSArguments() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s x | keygate add -s s -a a >/dev/null 2>&1
            keygate lock-keychain -a; echo lockall=$?
            keygate status | grep '^state:'
            keygate unlock-keychain; echo unlock=$?
            keygate status | grep '^state:'
            keygate lock-keychain login.keychain; echo lockkc=$?
            keygate unlock-keychain "$HOME/.local/share/keygate"; echo unlockkc=$?
            keygate lock-keychain /tmp/other.keychain 2>"$HOME/err"; echo other=$?
            cat "$HOME/err"
            keygate unlock-keychain -p hunter2 2>/dev/null; echo argvpw=$?
            """)
        let v = r.values
        r.assertValues(["lockall": "0", "unlock": "0", "lockkc": "0", "unlockkc": "0"])
        XCTAssertEqual(v["other"], "2", "another keychain is refused as a usage error: \(r.summary)")
        XCTAssertTrue(r.out.contains("one keychain per user"), r.summary)
        XCTAssertEqual(v["argvpw"], "2", "a password is never taken from argv: \(r.summary)")
        XCTAssertTrue(r.out.contains("state: locked"), r.summary)
        XCTAssertTrue(r.out.contains("state: unlocked"), r.summary)
    }

    // The macOS spellings scripts use.

    func test_listKeychains_defaultKeychain_andShowKeychainInfo_printMacOSsLines() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s x | keygate add -s s -a a --access none >/dev/null 2>&1
            echo '--- list'; keygate list-keychains; echo list=$?
            echo '--- user'; keygate list-keychains -d user
            echo '--- system'; keygate list-keychains -d system; echo system=$?
            echo '--- default'; keygate default-keychain; echo default=$?
            keygate list-keychains -s login.keychain; echo set=$?
            keygate default-keychain -s /tmp/other.keychain 2>/dev/null; echo other=$?
            keygate list-keychains -d nowhere 2>/dev/null; echo domain=$?
            echo '--- info'; keygate show-keychain-info; echo info=$?
            echo '--- end'
            """)
        let home = h.user.home
        XCTAssertTrue(r.out.contains("""
            --- list
                "\(home)/.local/share/keygate"
            list=0
            --- user
                "\(home)/.local/share/keygate"
            --- system
            system=0
            --- default
                "\(home)/.local/share/keygate"
            default=0
            """), r.summary)
        XCTAssertEqual(r.values["set"], "0", "the one keychain may be set: \(r.summary)")
        XCTAssertEqual(r.values["other"], "2", r.summary)
        XCTAssertEqual(r.values["domain"], "2", r.summary)
        XCTAssertTrue(r.out.contains("--- info\nKeychain \"\(home)/.local/share/keygate\" timeout=900s\ninfo=0\n"), r.summary)
    }

    func test_findGenericPassword_takesMacOSsFilters_andDashWEndsInANewline() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s one | keygate add -s vpn -a alice -l 'Office VPN' --access none >/dev/null 2>&1
            printf %s two | keygate add -s vpn -a bob -l 'Home VPN' --access none >/dev/null 2>&1
            keygate find-generic-password -w -s vpn -a alice | od -An -c | tr -s ' '
            printf 'label=%s\n' "$(keygate find-generic-password -l 'Home VPN' -w)"
            keygate find-generic-password -l 'Home VPN' | grep '"acct"'
            keygate find-generic-password -s vpn -D 'no such kind' 2>/dev/null; echo kind=$?
            keygate find-generic-password -s vpn -G 'no such value' 2>/dev/null; echo generic=$?
            keygate find-generic-password -s vpn -a alice -c aapl; echo creator=$?
            keygate find-generic-password -s vpn -l 'Nope' 2>/dev/null; echo nolabel=$?
            keygate find-generic-password -s vpn 2>/dev/null; echo two=$?
            """)
        XCTAssertTrue(r.out.contains(" o n e \\n\n"), "the secret, then a newline, as macOS prints it: \(r.summary)")
        XCTAssertEqual(r.values["label"], "two", r.summary)
        XCTAssertTrue(r.out.contains("    \"acct\"<blob>=\"bob\"\n"), r.summary)
        XCTAssertEqual(r.values["kind"], "44", r.summary)
        XCTAssertEqual(r.values["generic"], "44", r.summary)
        XCTAssertEqual(r.values["creator"], "44", r.summary)
        XCTAssertTrue(r.err.contains("no item has the creator code 'aapl': Keygate's items have none; leave out -c"), r.summary)
        XCTAssertEqual(r.values["nolabel"], "44", r.summary)
        XCTAssertEqual(r.values["two"], "206", "two items match: \(r.summary)")
    }
}
