// End-to-end tests of `keygate exec` with the real binary, as a real user through
// real pam_unix and gnome-keyring: secrets reach the command through its
// environment, its stdin or a pipe descriptor, never through keygate's argv, and the
// command's exit status comes back.
import Foundation
import KeygateTestSupport
import XCTest

final class ExecCLITests: XCTestCase {
    func test_exec_givesSecrets_byEnv_stdin_andFd_withOnePrompt() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s 'tok en$1' | keygate add -s deploy -a token; echo add=$?
            printf %s 'pipe-secret' | keygate add -s deploy -a pipe; echo add2=$?
            keygate lock
            printf 'env=%s\\n' "$(keygate exec -s deploy -a token --env TOKEN -- sh -c 'printf %s "$TOKEN"')"
            printf 'stdin=%s\\n' "$(keygate exec -s deploy -a pipe --stdin -- cat)"
            printf 'fd=%s\\n' "$(keygate exec -s deploy -a pipe --fd 3 -- sh -c 'cat <&3')"
            printf 'notInEnv=%s\\n' "$(keygate exec -s deploy -a pipe --fd 3 -- env | grep -c pipe-secret)"
            printf 'both=%s\\n' "$(keygate exec -s deploy -a token --env T -s deploy -a pipe --fd 4 -- sh -c 'printf %s+ "$T"; cat <&4')"
            """)
        let v = r.values
        r.assertValues(["add": "0", "env": "tok en$1", "stdin": "pipe-secret", "fd": "pipe-secret"])
        XCTAssertEqual(v["notInEnv"], "0", "a pipe secret is not in the child's environment: \(r.summary)")
        XCTAssertEqual(v["both"], "tok en$1+pipe-secret", r.summary)
        // One prompt for the implicit init, one after the lock; the exec reads reuse the unlock.
        XCTAssertEqual(try h.promptCount(), 2, h.prompts())
    }

    func test_exec_passesTheExitStatusThrough_signalsAs128PlusN_andArgumentsByteForByte() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s s | keygate add -s svc -a a
            keygate exec -s svc -a a --env X -- sh -c 'exit 7'; echo status=$?
            keygate exec -s svc -a a --env X -- sh -c 'kill -TERM $$'; echo signaled=$?
            keygate exec -s svc -a a --env X -- no-such-command-here; echo missing=$?
            arg=$(printf '\\377\\376-x\\303\\251')
            echo bytes=$(keygate exec -s svc -a a --env X -- sh -c 'printf %s "$1" | od -An -tx1 | tr -d " \\n"' sh "$arg")
            """)
        // The command's arguments reach it byte for byte: invalid UTF-8 is not replaced by U+FFFD.
        XCTAssertEqual(r.values["bytes"], "fffe2d78c3a9", r.summary)
        XCTAssertEqual(r.values["status"], "7", r.summary)
        XCTAssertEqual(r.values["signaled"], "143", r.summary)
        XCTAssertEqual(r.values["missing"], "127", r.summary)
    }

    /// `--no-unlock-prompt` is the command's own setting, passed down inside keygate: it never
    /// reaches the command it runs, nor any program keygate starts, through the environment.
    func test_exec_noUnlockPrompt_staysKeygates_andIsNotInTheCommandsEnvironment() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s s | keygate add -s svc -a a; echo add=$?
            printf 'child=%s\\n' "$(keygate --no-unlock-prompt exec -s svc -a a --env X -- sh -c 'printf %s "${KEYGATE_UNLOCK_PROMPT-unset}"')"
            printf 'given=%s\\n' "$(KEYGATE_UNLOCK_PROMPT=auto keygate --no-unlock-prompt exec -s svc -a a --env X -- sh -c 'printf %s "$KEYGATE_UNLOCK_PROMPT"')"
            """)
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertEqual(r.values["child"], "unset", "keygate did not set it for the command: \(r.summary)")
        XCTAssertEqual(r.values["given"], "auto", "the user's own value passes through unchanged: \(r.summary)")
    }

    func test_exec_missingItem_exits44_andDoesNotRunTheCommand() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s s | keygate add -s svc -a a
            keygate exec -s svc -a a --env A -s svc -a nobody --env B -- touch "$HOME/ran"; echo status=$?
            test -e "$HOME/ran" && echo ran=yes || echo ran=no
            """)
        XCTAssertEqual(r.values["status"], "44", r.summary)
        XCTAssertEqual(r.values["ran"], "no", r.summary)
    }

    func test_exec_refusesBadEnvNames_andLooseGroups_withUsageErrors() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            keygate exec -s svc -a a --env 'A-B' -- true; echo badName=$?
            keygate exec -s svc -a a -- true; echo noDestination=$?
            keygate exec -s svc -a a --fd 1 -- true; echo lowFd=$?
            keygate exec -s svc -a a --env A; echo noCommand=$?
            """)
        XCTAssertEqual(r.values["badName"], "2", r.summary)
        XCTAssertEqual(r.values["noDestination"], "2", r.summary)
        XCTAssertEqual(r.values["lowFd"], "2", r.summary)
        XCTAssertEqual(r.values["noCommand"], "2", r.summary)
        XCTAssertEqual(try h.promptCount(), 0, "a usage error never prompts")
    }
}
