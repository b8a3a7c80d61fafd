// docker-credential-keygate, byte for byte against the docker-credential-helpers
// protocol (credentials/credentials.go and error.go of docker/docker-credential-
// helpers): store/get/erase/list/version on stdin and stdout, Go's JSON encoding
// (HTML-safe escapes, final newline), errors as one line on stdout with exit 1, and
// the exact not-found text docker matches. Then each real docker CLI on the machine
// (Debian's docker.io client, and any other in /usr/local/bin), with no daemon:
// `docker login` to a registry endpoint on 127.0.0.1 (a Python stub of the /v2/ basic
// auth check, which is all login talks to) stores through the helper, and `docker
// logout` erases.
import Foundation
import KeygateTestSupport
import XCTest

final class DockerCredentialTests: XCTestCase {
    private func harness() throws -> CLIUserHarness {
        let h = try CLIUserHarness()
        try h.installHelperWrappers()
        return h
    }

    /// Runs each step and prints `name=` followed by base64 of its stdout, then `name.rc=`.
    private func outputs(_ r: ProcessResult) -> [String: Data] {
        var out: [String: Data] = [:]
        for (key, value) in r.values where !key.hasSuffix(".rc") { out[key] = Data(base64Encoded: value) }
        return out
    }

    func test_aNewCredential_hasNoAccessControl_underTheShippedPolicy_andAReplacedOneKeepsItsOwn() throws {
        // docker asks from builds and CI as often as at a terminal (docs/INTEGRATIONS.md), so its new
        // credentials are ungated under the shipped policy.
        let h = try harness()
        let root = try h.policyRoot([:], shipped: true, for: self)
        let r = try h.run(#"""
            export PATH="$HOME/bin:$PATH"
            keygate init >/dev/null 2>&1
            printf '{"ServerURL":"registry.test","Username":"ann","Secret":"tok"}' | docker-credential-keygate store; echo store=$?
            keygate list --internet | grep 'access:' | sed 's/^ */new /'
            echo before=$(wc -l < "$HOME/prompts")
            printf 'get=%s\n' "$(echo registry.test | KEYGATE_ASKPASS= docker-credential-keygate get)"
            echo after=$(wc -l < "$HOME/prompts")
            printf %s gated | keygate add --internet -s registry.gated -a bob -l 'Docker Credentials' -j registry.gated --access user-presence 2>/dev/null
            printf '{"ServerURL":"registry.gated","Username":"bob","Secret":"tok2"}' | docker-credential-keygate store; echo store2=$?
            keygate list --internet -s registry.gated | grep 'access:' | sed 's/^ */kept /'
            """#, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        XCTAssertEqual(r.values["store"], "0", r.summary)
        XCTAssertTrue(r.out.contains("new access: none\n"), r.summary)
        XCTAssertTrue(r.out.contains("get={\"ServerURL\":\"registry.test\",\"Username\":\"ann\",\"Secret\":\"tok\"}"),
                      "read with no terminal and no askpass: \(r.summary)")
        XCTAssertEqual(r.values["after"], r.values["before"], "no prompt: \(r.summary)")
        XCTAssertEqual(r.values["store2"], "0", r.summary)
        XCTAssertTrue(r.out.contains("kept access: user-presence\n"), "a stored-again credential keeps its access: \(r.summary)")
    }

    func test_protocol_byteForByte() throws {
        let h = try harness()
        let r = try h.run(#"""
            cd "$HOME"; export PATH="$HOME/bin:$PATH"
            step() { name=$1; shift; out=$("$@" | base64 -w0; exit "${PIPESTATUS[0]}"); rc=$?; echo "$name=$out"; echo "$name.rc=$rc"; }
            step store sh -c 'printf "%s" "{\"ServerURL\":\"https://127.0.0.1:5000/v2/\",\"Username\":\"bob\",\"Secret\":\"p<a>&\\\"s\\\\q\\u00e9\\n\"}" | docker-credential-keygate store'
            step store2 sh -c 'printf "{\"ServerURL\": \"registry.test\",\n \"Username\": \"ann\", \"Secret\": \"tok\"}\n" | docker-credential-keygate store'
            step get sh -c 'echo https://127.0.0.1:5000/v2/ | docker-credential-keygate get'
            step list docker-credential-keygate list
            step missing sh -c 'echo https://nowhere.test | docker-credential-keygate get'
            step erase sh -c 'printf "https://127.0.0.1:5000/v2/\n" | docker-credential-keygate erase'
            step gone sh -c 'echo https://127.0.0.1:5000/v2/ | docker-credential-keygate get'
            step erasegone sh -c 'echo https://127.0.0.1:5000/v2/ | docker-credential-keygate erase'
            step nouser sh -c 'printf "{\"ServerURL\":\"x.test\",\"Username\":\"\",\"Secret\":\"s\"}" | docker-credential-keygate store'
            step nourl sh -c 'printf "{\"Username\":\"u\",\"Secret\":\"s\"}" | docker-credential-keygate store'
            step emptyget sh -c 'printf "\n" | docker-credential-keygate get'
            step noargs docker-credential-keygate
            step unknown docker-credential-keygate frobnicate
            step version docker-credential-keygate version
            step replace sh -c 'printf "{\"ServerURL\":\"registry.test\",\"Username\":\"ann2\",\"Secret\":\"tok2\"}" | docker-credential-keygate store && docker-credential-keygate list'
            """#)
        let o = outputs(r)
        let v = r.values
        func text(_ s: String) -> Data { Data(s.utf8) }
        XCTAssertEqual(v["store.rc"], "0", r.summary)
        XCTAssertEqual(o["store"], Data(), "store prints nothing: \(r.summary)")
        XCTAssertEqual(v["store2.rc"], "0", "JSON over several lines, with spaces: \(r.summary)")
        XCTAssertEqual(v["get.rc"], "0", r.summary)
        XCTAssertEqual(o["get"], text("{\"ServerURL\":\"https://127.0.0.1:5000/v2/\",\"Username\":\"bob\",\"Secret\":\"p\\u003ca\\u003e\\u0026\\\"s\\\\q\u{e9}\\n\"}\n"),
                       "Go's encoding: <>& as \\u escapes, é as UTF-8, a final newline: \(String(decoding: o["get"] ?? Data(), as: UTF8.self))")
        XCTAssertEqual(o["list"], text("{\"https://127.0.0.1:5000/v2/\":\"bob\",\"registry.test\":\"ann\"}\n"), r.summary)
        XCTAssertEqual(o["missing"], text("credentials not found in native keychain\n"), r.summary)
        XCTAssertEqual(v["missing.rc"], "1", r.summary)
        XCTAssertEqual(v["erase.rc"], "0", r.summary)
        XCTAssertEqual(o["erase"], Data(), r.summary)
        XCTAssertEqual(o["gone"], text("credentials not found in native keychain\n"), r.summary)
        XCTAssertEqual(v["gone.rc"], "1", r.summary)
        XCTAssertEqual(v["erasegone.rc"], "1", r.summary)
        XCTAssertEqual(o["nouser"], text("no credentials username\n"), r.summary)
        XCTAssertEqual(v["nouser.rc"], "1", r.summary)
        XCTAssertEqual(o["nourl"], text("no credentials server URL\n"), r.summary)
        XCTAssertEqual(o["emptyget"], text("no credentials server URL\n"), r.summary)
        XCTAssertEqual(o["noargs"], text("Usage: docker-credential-keygate <store|get|erase|list|version>\n"), r.summary)
        XCTAssertEqual(v["noargs.rc"], "1", r.summary)
        XCTAssertEqual(o["unknown"], text("Unknown credential action `frobnicate`\n"), r.summary)
        XCTAssertEqual(v["unknown.rc"], "1", r.summary)
        XCTAssertEqual(o["version"], text("docker-credential-keygate (keygate) \(try keygateVersion())\n"), r.summary)
        XCTAssertEqual(o["replace"], text("{\"registry.test\":\"ann2\"}\n"), "one credential per server URL: \(r.summary)")
    }

    private func keygateVersion() throws -> String {
        let r = try Subprocess.run([PackagePaths.keygateBinary, "--version"])
        return r.out.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "keygate ", with: "")
    }

    /// A registry's login endpoint on 127.0.0.1: GET /v2/ with basic auth, as docker login checks it.
    private static let registry = #"""
    import base64, http.server, os, sys
    expected, port_file, log_file = open(sys.argv[1]).read().strip(), sys.argv[2], sys.argv[3]
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args): pass
        def do_GET(self):
            auth = self.headers.get("Authorization", "")
            ok = auth.startswith("Basic ") and base64.b64decode(auth[6:]).decode() == expected
            with open(log_file, "a") as log: log.write(self.path + (" ok" if ok else " refused") + "\n")
            self.send_response(200 if ok else 401)
            self.send_header("Docker-Distribution-API-Version", "registry/2.0")
            if not ok: self.send_header("WWW-Authenticate", 'Basic realm="keygate-test"')
            self.send_header("Content-Length", "2"); self.end_headers(); self.wfile.write(b"{}")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file + ".tmp", "w") as f: f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
    """#

    /// Each docker CLI on the machine: Debian's (docker.io, /usr/bin) and any other on PATH.
    private var dockerClients: [String] {
        ["/usr/bin/docker", "/usr/local/bin/docker"].filter { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func test_dockerLogin_storesThroughHelper_withNoDaemon_andLogoutErases() throws {
        try Requirement.require(!dockerClients.isEmpty, "the docker CLI (apt-get install docker.io; scripts/install-deps)")
        try Requirement.require(CLIUserHarness.hasTool("python3"), "python3")
        for client in dockerClients { try dockerLoginFlow(client) }
    }

    private func dockerLoginFlow(_ docker: String) throws {
        let h = try harness()
        let password = "reg-pass-\(UUID().uuidString.prefix(8))"
        try h.writeUserFile("registry.py", Self.registry, mode: 0o600)
        try h.writeUserFile("registry-secret", "bob:" + password, mode: 0o600)
        try h.writeUserFile("docker-password", password, mode: 0o600)
        let r = try h.run("""
            cd "$HOME"; export PATH="$HOME/bin:$PATH"
            export DOCKER_HOST="unix://$HOME/no-daemon.sock"
            mkdir -p .docker && echo '{"credsStore": "keygate"}' > .docker/config.json
            timeout 60 python3 registry.py "$HOME/registry-secret" "$HOME/port" "$HOME/registry-log" &
            SERVER=$!; trap 'kill $SERVER 2>/dev/null' EXIT
            for i in $(seq 100); do [ -s port ] && break; sleep 0.1; done
            PORT=$(cat port)
            echo version=$(\(docker) --version)
            \(docker) login -u bob --password-stdin "127.0.0.1:$PORT" < docker-password > login.out 2>&1; echo login=$?
            echo inconfig=$(grep -c -F "$(cat docker-password)" .docker/config.json)
            keygate list --internet --json; echo
            echo "127.0.0.1:$PORT" | docker-credential-keygate get | grep -c -F "\\"Secret\\":\\"$(cat docker-password)\\"" | sed 's/^/got=/'
            echo ok=$(grep -c ' ok' registry-log)
            \(docker) logout "127.0.0.1:$PORT" > logout.out 2>&1; echo logout=$?
            echo left=$(docker-credential-keygate list)
            cat login.out logout.out >&2
            """, timeout: 90)
        let v = r.values
        XCTAssertTrue(v["version"]?.hasPrefix("Docker version") == true, r.summary)
        XCTAssertEqual(v["login"], "0", "\(docker): \(r.summary)")
        XCTAssertEqual(v["inconfig"], "0", "the password is not in config.json: \(r.summary)")
        XCTAssertTrue(r.out.contains("\"server\":\"127.0.0.1\"") && r.out.contains("\"account\":\"bob\""), r.summary)
        XCTAssertTrue(r.out.contains("\"label\":\"Docker Credentials\""), r.summary)
        XCTAssertEqual(v["got"], "1", "the helper gives the password docker stored: \(r.summary)")
        XCTAssertNotEqual(v["ok"], "0", "the registry accepted the login: \(r.summary)")
        XCTAssertEqual(v["logout"], "0", r.summary)
        XCTAssertEqual(v["left"], "{}", "logout erased it: \(r.summary)")
    }
}
