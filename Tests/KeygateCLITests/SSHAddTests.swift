// ssh-add passphrases through Keygate, with the real OpenSSH tools as a real user:
// `keygate ssh-add KEY` asks for the passphrase, checks it with ssh-keygen and stores
// it under the key's fingerprint; then the real ssh-add, with
// SSH_ASKPASS=keygate-ssh-askpass SSH_ASKPASS_REQUIRE=force, loads the key into a real
// ssh-agent after one presence check through PAM and without the passphrase being
// typed. Wrong passphrases are refused before anything is stored, and prompts that are
// not ssh-add's passphrase question get no answer.
import Foundation
import KeygateTestSupport
import XCTest

final class SSHAddTests: XCTestCase {
    /// An askpass for keygate that answers its passphrase question from a queue, then
    /// from key-passphrase, and everything else (PAM) with the login password.
    private static let askpass = """
    #!/bin/sh
    echo prompt >> "$HOME/prompts"
    printf '%s\\n' "$1" >> "$HOME/prompt-texts"
    case "$1" in
    Passphrase*)
        if [ -s "$HOME/pass-queue" ]; then
            head -n1 "$HOME/pass-queue"; tail -n +2 "$HOME/pass-queue" > "$HOME/pass-queue.rest"; mv "$HOME/pass-queue.rest" "$HOME/pass-queue"
        else cat "$HOME/key-passphrase"; fi ;;
    *) cat "$HOME/answer" ;;
    esac
    """

    private func harness() throws -> (CLIUserHarness, String) {
        for tool in ["ssh-agent", "ssh-add", "ssh-keygen"] {
            try Requirement.require(CLIUserHarness.hasTool(tool), "\(tool) (apt-get install openssh-client; scripts/install-deps)")
        }
        let h = try CLIUserHarness()
        try h.installHelperWrappers()
        let passphrase = "key-pass-\(UUID().uuidString.prefix(8))"
        try h.writeUserFile("key-passphrase", passphrase, mode: 0o600)
        try h.writeUserFile("ssh-askpass-test", Self.askpass, mode: 0o700)
        try h.writeUserFile("prompt-texts", "", mode: 0o600)
        return (h, passphrase)
    }

    private static let makeKey = """
        cd "$HOME"; export PATH="$HOME/bin:$PATH"
        ssh-keygen -q -t ed25519 -C keygate-test -f key -N "$(cat key-passphrase)"
        """

    func test_sshAdd_storesOnce_thenSshAddLoadsTheKey_afterPresence_withoutTypingThePassphrase() throws {
        let (h, passphrase) = try harness()
        let r = try h.run(Self.makeKey + "\n" + CLIUserHarness.spy(on: "ssh-keygen") + """

            PATH="$HOME/spy:$PATH" keygate ssh-add key; echo stored=$?
            echo spied=$(grep -c '^argv: -y -f key$' spy.log)
            echo leaked=$(grep -c -F "$(cat key-passphrase)" spy.log)
            keygate list -s ssh --json; echo
            echo fp=$(ssh-keygen -l -E sha256 -f key | cut -d' ' -f2)
            eval "$(ssh-agent -s)" >/dev/null; trap 'ssh-agent -k >/dev/null' EXIT
            keygate lock
            echo n0=$(wc -l < prompts)
            SSH_ASKPASS=keygate-ssh-askpass SSH_ASKPASS_REQUIRE=force ssh-add key </dev/null 2>ssh-add.err; echo add=$?
            echo n1=$(wc -l < prompts)
            echo loaded=$(ssh-add -l | grep -c keygate-test)
            echo asked=$(grep -c '^Passphrase' prompt-texts)
            """, extraEnvironment: ["KEYGATE_ASKPASS": h.user.home + "/ssh-askpass-test"])
        let v = r.values
        XCTAssertEqual(v["stored"], "0", r.summary)
        XCTAssertNotEqual(v["spied"], "0", "keygate ssh-add checked the passphrase with ssh-keygen -y: \(r.summary)")
        XCTAssertEqual(v["leaked"], "0", "the passphrase was in no argument or environment of ssh-keygen: \(r.summary)")
        XCTAssertTrue(r.out.contains("\"service\":\"ssh\"") && r.out.contains("\"account\":\"\(v["fp"] ?? "?")\""),
                      "stored under the key's fingerprint: \(r.summary)")
        XCTAssertTrue(r.out.contains("\"access\":\"user-presence\""), r.summary)
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["loaded"], "1", "the agent holds the key: \(r.summary)")
        XCTAssertEqual(Int(v["n1"] ?? ""), (Int(v["n0"] ?? "") ?? -9) + 1, "one presence prompt (PAM) for ssh-add: \(h.prompts())")
        XCTAssertEqual(v["asked"], "1", "the passphrase was asked for once, by keygate ssh-add: \(h.prompts())")
        XCTAssertFalse(r.out.contains(passphrase) || r.err.contains(passphrase), r.summary)
    }

    func test_wrongPassphrase_isRefused_andNothingIsStored() throws {
        let (h, _) = try harness()
        try h.writeUserFile("pass-queue", "wrong1\nwrong2\nwrong3\n", mode: 0o600)
        let r = try h.run(Self.makeKey + """

            keygate ssh-add key; echo stored=$?
            echo items=$(keygate list -s ssh --json | grep -c '"service":"ssh"')
            printf 'retry\\n' > pass-queue
            keygate ssh-add key; echo stored2=$?
            echo items2=$(keygate list -s ssh --json | grep -c '"service":"ssh"')
            """, extraEnvironment: ["KEYGATE_ASKPASS": h.user.home + "/ssh-askpass-test"])
        let v = r.values
        XCTAssertEqual(v["stored"], "51", "three wrong passphrases: authentication failed: \(r.summary)")
        XCTAssertEqual(v["items"], "0", r.summary)
        XCTAssertEqual(v["stored2"], "0", "one wrong try, then the right one: \(r.summary)")
        XCTAssertEqual(v["items2"], "1", r.summary)
        XCTAssertTrue(r.err.contains("does not open"), r.summary)
    }

    func test_askpass_answersOnlySshAddsPassphraseQuestion_andFailsFastWhenNothingIsStored() throws {
        let (h, _) = try harness()
        let r = try h.run(Self.makeKey + """

            keygate-ssh-askpass 'Are you sure you want to continue connecting (yes/no/[fingerprint])? '; echo other=$?
            keygate-ssh-askpass 'Bad passphrase, try again for key: '; echo bad=$?
            keygate-ssh-askpass 'Enter passphrase for key: '; echo nothing=$?
            eval "$(ssh-agent -s)" >/dev/null; trap 'ssh-agent -k >/dev/null' EXIT
            SSH_ASKPASS=keygate-ssh-askpass SSH_ASKPASS_REQUIRE=force timeout 30 ssh-add key </dev/null; echo add=$?
            echo loaded=$(ssh-add -l | grep -c keygate-test)
            """, extraEnvironment: ["KEYGATE_ASKPASS": h.user.home + "/ssh-askpass-test"])
        let v = r.values
        XCTAssertEqual(v["other"], "1", r.summary)
        XCTAssertEqual(v["bad"], "1", "no second answer after a bad passphrase: \(r.summary)")
        XCTAssertEqual(v["nothing"], "44", r.summary)
        XCTAssertNotEqual(v["add"], "0", r.summary)
        XCTAssertNotEqual(v["add"], "124", "ssh-add gave up at once, it did not hang: \(r.summary)")
        XCTAssertEqual(v["loaded"], "0", r.summary)
    }
}
