// git-credential-keygate through the real git, as a real user: `git credential
// fill/approve/reject` with credential.helper=keygate; a clone over HTTP with basic
// auth from `git http-backend` behind a small Python server on 127.0.0.1 (the first
// clone asks through GIT_ASKPASS and stores, the second reads the credential back
// through Keygate); a 401 for a stored credential makes git reject it, which erases
// it; a user-presence policy on the host makes the read prompt through PAM; and the
// protocol fields newer git sends (password_expiry_utc, oauth_refresh_token) pass
// through the helper.
import Foundation
import KeygateTestSupport
import XCTest

final class GitCredentialTests: XCTestCase {
    private func harness() throws -> CLIUserHarness {
        try Requirement.require(CLIUserHarness.hasTool("git"), "git (apt-get install git; scripts/install-deps)")
        let h = try CLIUserHarness()
        try h.installHelperWrappers()
        return h
    }

    func test_credentialFillApproveReject_throughRealGit_areInternetPasswords() throws {
        let h = try harness()
        let r = try h.run("""
            cd "$HOME"; export PATH="$HOME/bin:$PATH"
            git config --global credential.helper keygate
            printf 'protocol=https\\nhost=git.example.test:8443\\nusername=alice\\npassword=s3cret=x y\\n\\n' | git credential approve; echo approve=$?
            keygate list --internet --json; echo
            printf 'macos=%s\\n' "$(keygate find-internet-password -s git.example.test -a alice -w)"
            printf 'protocol=https\\nhost=git.example.test:8443\\n\\n' | GIT_TERMINAL_PROMPT=0 git credential fill > fill.out; echo fill=$?
            sed 's/^/fill./' fill.out
            printf 'protocol=https\\nhost=other.example.test\\n\\n' | GIT_TERMINAL_PROMPT=0 git credential fill; echo fillother=$?
            printf 'protocol=https\\nhost=git.example.test:8443\\nusername=alice\\npassword=s3cret=x y\\n\\n' | git credential reject; echo reject=$?
            echo left=$(keygate list --internet --json | grep -c git.example.test)
            """)
        let v = r.values
        XCTAssertEqual(v["approve"], "0", r.summary)
        XCTAssertTrue(r.out.contains("\"server\":\"git.example.test\""), "stored as an internet password for the host: \(r.summary)")
        XCTAssertTrue(r.out.contains("\"port\":8443"), r.summary)
        XCTAssertTrue(r.out.contains("\"account\":\"alice\""), r.summary)
        XCTAssertEqual(v["macos"], "s3cret=x y", "the macOS verb reads the same item: \(r.summary)")
        XCTAssertEqual(v["fill"], "0", r.summary)
        XCTAssertEqual(v["fill.username"], "alice", r.summary)
        XCTAssertEqual(v["fill.password"], "s3cret=x y", "the value keeps its '=' and space: \(r.summary)")
        XCTAssertNotEqual(v["fillother"], "0", "no credential for another host, and no prompt allowed: git fails: \(r.summary)")
        XCTAssertEqual(v["reject"], "0", r.summary)
        XCTAssertEqual(v["left"], "0", "reject erased it: \(r.summary)")
        XCTAssertEqual(try h.promptCount(), 1, "only the keychain's creation asked for the login password: \(h.prompts())")
    }

    func test_helper_passesThroughExpiryAndRefreshToken_andIgnoresUnknownOperations() throws {
        let h = try harness()
        let r = try h.run("""
            cd "$HOME"; export PATH="$HOME/bin:$PATH"
            printf 'protocol=https\\nhost=forge.test\\npath=org/repo.git\\nusername=bob\\npassword=pw1\\npassword_expiry_utc=4102444800\\noauth_refresh_token=rt-123\\n\\n' | git-credential-keygate store; echo store=$?
            printf 'protocol=https\\nhost=forge.test\\npath=org/repo.git\\n\\n' | git-credential-keygate get > get.out; echo get=$?
            sed 's/^/get./' get.out
            printf 'protocol=https\\nhost=forge.test\\n\\n' | git-credential-keygate get | wc -c | sed 's/^ */nopath=/'
            printf 'protocol=https\\nhost=forge.test\\n\\n' | git-credential-keygate capability; echo capability=$?
            printf 'v=%s\\n' "$(keygate get --internet -s forge.test -a bob)"
            """)
        let v = r.values
        r.assertValues([
            "store": "0", "get": "0", "get.username": "bob", "get.password": "pw1", "get.password_expiry_utc": "4102444800",
            "get.oauth_refresh_token": "rt-123"
        ])
        XCTAssertEqual(v["nopath"], "0", "a credential for a path is not given for the bare host: \(r.summary)")
        XCTAssertEqual(v["capability"], "0", "an operation the helper does not know is ignored: \(r.summary)")
        XCTAssertTrue(r.out.contains("v=pw1\noauth_refresh_token=rt-123"), "the refresh token is sealed with the password: \(r.summary)")
    }

    /// A git server on 127.0.0.1: `git http-backend` behind a Python server requiring basic auth.
    private static let server = #"""
    import base64, http.server, os, subprocess, sys
    root, secret_file, port_file, log_file = sys.argv[1:5]
    expected = open(secret_file).read().strip()
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args): pass
        def handle_one(self, body):
            auth = self.headers.get("Authorization", "")
            ok = auth.startswith("Basic ") and base64.b64decode(auth[6:]).decode() == expected
            with open(log_file, "a") as log: log.write(("auth-ok" if ok else ("auth-bad" if auth else "no-auth")) + "\n")
            if not ok:
                self.send_response(401); self.send_header("WWW-Authenticate", 'Basic realm="keygate-test"')
                self.send_header("Content-Length", "0"); self.end_headers(); return
            path, _, query = self.path.partition("?")
            env = dict(os.environ, GIT_PROJECT_ROOT=root, GIT_HTTP_EXPORT_ALL="1", REQUEST_METHOD=self.command,
                       PATH_INFO=path, QUERY_STRING=query, CONTENT_TYPE=self.headers.get("Content-Type", ""),
                       CONTENT_LENGTH=str(len(body)), REMOTE_USER=expected.split(":")[0], REMOTE_ADDR="127.0.0.1",
                       GATEWAY_INTERFACE="CGI/1.1", SERVER_PROTOCOL="HTTP/1.1")
            if self.headers.get("Content-Encoding"): env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
            if self.headers.get("Git-Protocol"): env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
            out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60).stdout
            head, _, payload = out.partition(b"\r\n\r\n")
            status = 200; headers = []
            for line in head.decode().split("\r\n"):
                name, _, value = line.partition(": ")
                if name == "Status": status = int(value.split()[0])
                elif name: headers.append((name, value))
            self.send_response(status)
            for name, value in headers: self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload))); self.end_headers(); self.wfile.write(payload)
        def do_GET(self): self.handle_one(b"")
        def do_POST(self): self.handle_one(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f: f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
    """#

    /// The shell lines that start the server (port in $PORT) and make a repository with one commit.
    private static let serverSetup = """
        cd "$HOME"; export PATH="$HOME/bin:$PATH"
        git config --global credential.helper keygate
        git config --global user.email t@example.test; git config --global user.name Test
        git config --global init.defaultBranch main
        mkdir -p srv && git init -q --bare srv/repo.git
        git clone -q srv/repo.git seed 2>/dev/null && (cd seed && echo hello > README && git add README && git commit -qm one && git push -q origin HEAD:main)
        timeout 110 python3 git-server.py "$HOME/srv" "$HOME/server-secret" "$HOME/port" "$HOME/server-log" &
        SERVER=$!; trap 'kill $SERVER 2>/dev/null' EXIT
        for i in $(seq 100); do [ -s port ] && break; sleep 0.1; done
        PORT=$(cat port); echo port=$PORT
        cat > git-askpass <<'ASK'
        #!/bin/sh
        echo "$1" >> "$HOME/git-asks"
        case "$1" in Username*) echo gituser;; *) cat "$HOME/git-password";; esac
        ASK
        chmod 700 git-askpass; : > git-asks
        export GIT_ASKPASS="$HOME/git-askpass" GIT_TERMINAL_PROMPT=0
        """

    private func serverHarness(password: String = "http-pass-\(UUID().uuidString.prefix(8))") throws -> (CLIUserHarness, String) {
        let h = try harness()
        try Requirement.require(CLIUserHarness.hasTool("python3"), "python3")
        try h.writeUserFile("git-server.py", Self.server, mode: 0o600)
        try h.writeUserFile("server-secret", "gituser:" + password, mode: 0o600)
        try h.writeUserFile("git-password", password, mode: 0o600)
        return (h, password)
    }

    func test_clone_asksOnce_thenReadsThroughKeygate_andShowsInList() throws {
        let (h, password) = try serverHarness()
        let r = try h.run(Self.serverSetup + """

            git clone -q "http://127.0.0.1:$PORT/repo.git" first; echo clone1=$?
            echo asks1=$(wc -l < git-asks)
            keygate list --internet --json; echo
            git clone -q "http://127.0.0.1:$PORT/repo.git" second; echo clone2=$?
            echo asks2=$(wc -l < git-asks)
            echo readme=$(cat second/README)
            echo served=$(grep -c auth-ok server-log)
            """, timeout: 120)
        let v = r.values
        XCTAssertEqual(v["clone1"], "0", r.summary)
        XCTAssertEqual(v["asks1"], "2", "the first clone asked for the username and the password: \(r.summary)")
        XCTAssertTrue(r.out.contains("\"server\":\"127.0.0.1\""), r.summary)
        XCTAssertTrue(r.out.contains("\"account\":\"gituser\""), r.summary)
        XCTAssertTrue(r.out.contains("\"protocol\":\"http\""), r.summary)
        XCTAssertEqual(v["clone2"], "0", r.summary)
        XCTAssertEqual(v["asks2"], "2", "the second clone asked nothing: the credential came from Keygate: \(r.summary)")
        XCTAssertEqual(v["readme"], "hello", r.summary)
        XCTAssertFalse(r.out.contains(password) || r.err.contains(password), "the password is in no output: \(r.summary)")
    }

    func test_401ForStoredCredential_rejectErasesIt_andTheNextCloneAsksAgain() throws {
        let (h, _) = try serverHarness()
        let r = try h.run(Self.serverSetup + """

            printf 'protocol=http\\nhost=127.0.0.1:%s\\nusername=gituser\\npassword=stale\\n\\n' "$PORT" | git credential approve
            echo stored=$(keygate list --internet --json | grep -c gituser)
            git clone -q "http://127.0.0.1:$PORT/repo.git" first; echo clone1=$?
            echo asks1=$(wc -l < git-asks)
            echo after401=$(keygate list --internet --json | grep -c gituser)
            git clone -q "http://127.0.0.1:$PORT/repo.git" second; echo clone2=$?
            echo asks2=$(wc -l < git-asks)
            echo bad=$(grep -c auth-bad server-log)
            """, timeout: 120)
        let v = r.values
        XCTAssertEqual(v["stored"], "1", r.summary)
        XCTAssertNotEqual(v["clone1"], "0", "the stale password gets a 401: \(r.summary)")
        XCTAssertEqual(v["asks1"], "0", "git used the stored credential, without asking: \(r.summary)")
        XCTAssertEqual(v["bad"], "1", "the server saw the stale credential once: \(r.summary)")
        XCTAssertEqual(v["after401"], "0", "git rejected it and the helper erased it: \(r.summary)")
        XCTAssertEqual(v["clone2"], "0", r.summary)
        XCTAssertEqual(v["asks2"], "2", "with nothing stored, git asked again: \(r.summary)")
    }

    func test_userPresencePolicyOnHost_promptsThroughPAM_beforeGitGetsThePassword() throws {
        let (h, _) = try serverHarness()
        let root = try h.policyRoot(["50-git.policy": "[service \"127.0.0.1\"]\naccess = user-presence\nprompt = \"Let git use your 127.0.0.1 password\"\n"], for: self)
        let r = try h.run(Self.serverSetup + """

            git clone -q "http://127.0.0.1:$PORT/repo.git" first; echo clone1=$?
            keygate list --internet --json; echo
            keygate lock
            echo n0=$(wc -l < "$HOME/prompts")
            git clone -q "http://127.0.0.1:$PORT/repo.git" second; echo clone2=$?
            echo n1=$(wc -l < "$HOME/prompts")
            echo asks=$(wc -l < git-asks)
            keygate lock
            echo wrong > "$HOME/answer"
            git clone -q "http://127.0.0.1:$PORT/repo.git" third; echo clone3=$?
            echo asks3=$(wc -l < git-asks)
            """, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root], timeout: 120)
        let v = r.values
        XCTAssertEqual(v["clone1"], "0", r.summary)
        XCTAssertTrue(r.out.contains("\"access\":\"user-presence\""), "the stored credential carries the policy's gate: \(r.summary)")
        XCTAssertEqual(v["clone2"], "0", r.summary)
        XCTAssertEqual(Int(v["n1"] ?? ""), (Int(v["n0"] ?? "") ?? -9) + 1, "reading the credential asked once through PAM: \(r.summary)")
        XCTAssertEqual(v["asks"], "2", "git itself did not ask again: \(r.summary)")
        XCTAssertTrue(h.prompts().contains("Let git use your 127.0.0.1 password"), "the policy's prompt was shown: \(h.prompts())")
        XCTAssertEqual(v["clone3"], "0", "a failed presence check is a helper failure: git falls back to asking: \(r.summary)")
        XCTAssertEqual(v["asks3"], "4", "and git asked for the username and password: \(r.summary)")
    }
}
