// The credential helpers' parsers on their own: docker's JSON (decoding escapes and
// surrogate pairs, refusing malformed input with a message, Go's escaping on the way
// out, and a round trip over random bytes), git's key=value lines (CRLF, values
// holding '=', a port in host, lines without '='), the key file in ssh-add's prompt,
// and a docker server URL's parts. The helpers' behaviour with the real clients is
// in KeygateCLITests.
@testable import KeygateCLI
import Keygate
import XCTest

final class HelperProtocolTests: XCTestCase {
    private func decode(_ text: String) throws -> [String: String] {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBytes { try DockerCredentialJSON.decodeObject($0) }
            .mapValues { String(decoding: $0, as: UTF8.self) }
    }

    func test_dockerJSON_decodesEscapesAndSurrogatePairs_andSkipsOtherScalars() throws {
        let fields = try decode(#"{ "ServerURL" : "a\/b", "Secret":"\"\\\n\t\u00e9\ud83d\ude00", "n": null, "x": 12.5, "t": true, "e": -1.5E+3, "z": 0 }"#)
        XCTAssertEqual(fields["ServerURL"], "a/b")
        XCTAssertEqual(fields["Secret"], "\"\\\n\té😀")
        XCTAssertNil(fields["n"])
        XCTAssertEqual(try decode("{}"), [:])
    }

    func test_dockerJSON_refusesMalformedInput() {
        for bad in ["", "[]", "{", #"{"a":"b""#, #"{"a":}"#, #"{"a":"\x"}"#, #"{"a":"\u12"}"#, "{\"a\":\"\n\"}", #"{"a":nope}"#, #"{"a" "b"}"#,
                    #"{"a":"b","a":"c"}"#, #"{"a":1,"a":"c"}"#, #"{"a":"\ud83d"}"#, #"{"a":{}}"#, #"{"a":[]}"#, #"{"a":01}"#,
                    #"{"a":1.}"#, #"{"a":1e}"#, #"{"a":"b"} x"#, #"{"a":"b",}"#] {
            XCTAssertThrowsError(try decode(bad), "accepted \(bad.debugDescription)")
        }
    }

    func test_dockerJSON_encodesAsGo() {
        var out: [UInt8] = []
        DockerCredentialJSON.appendString(Array("<a>&\"\\\n\r\t\u{01}é\u{2028}\u{2029}/".utf8), to: &out)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), #""\u003ca\u003e\u0026\"\\\n\r\t\u0001é\u2028\u2029/""#)
    }

    func test_dockerJSON_roundTripsRandomUTF8() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let scalars = (0..<Int.random(in: 0..<40, using: &generator)).compactMap { _ -> Character? in
                let pick = [UInt32.random(in: 0..<0x80, using: &generator), UInt32.random(in: 0x80..<0x2100, using: &generator),
                            0x2028, UInt32.random(in: 0x1F600..<0x1F650, using: &generator)].randomElement(using: &generator) ?? 0x41
                return Unicode.Scalar(pick).map(Character.init)
            }
            let value = String(scalars)
            var object: [UInt8] = Array("{\"k\":".utf8)
            DockerCredentialJSON.appendString(Array(value.utf8), to: &object)
            object += Array("}".utf8)
            XCTAssertEqual(try decode(String(decoding: object, as: UTF8.self))["k"], value)
        }
    }

    private func message(_ text: String) throws -> GitCredentialMessage {
        var bytes = Array(text.utf8)
        return try GitCredentialMessage(parsing: try SecureBytes(consuming: &bytes))
    }

    func test_gitMessage_parsesFields_keepsEqualsInValues_andSecretsAsBytes() throws {
        let m = try message("protocol=https\r\nhost=git.test:8443\npath=a/b.git\nusername=al=ice\npassword=p=w d\nnonsense\nwwwauth[]=Basic\n\n")
        XCTAssertEqual(m.protocol, "https")
        XCTAssertEqual(m.serverAndPort?.server, "git.test")
        XCTAssertEqual(m.serverAndPort?.port, 8443)
        XCTAssertEqual(m.internetProtocol, .https)
        XCTAssertEqual(m.path, "a/b.git")
        XCTAssertEqual(m.username, "al=ice")
        XCTAssertEqual(m.password.map { String(decoding: $0.unprotectedCopy(), as: UTF8.self) }, "p=w d")
        XCTAssertNil(m.oauthRefreshToken)
        let q = try XCTUnwrap(m.query())
        XCTAssertEqual(q.server, "git.test"); XCTAssertEqual(q.port, 8443); XCTAssertEqual(q.path, "a/b.git")
    }

    func test_gitMessage_withoutHost_hasNoQuery_andBracketedIPv6KeepsItsColons() throws {
        XCTAssertNil(try message("protocol=https\n").query())
        XCTAssertEqual(try message("host=[::1]\n").serverAndPort?.server, "[::1]")
        XCTAssertEqual(try message("host=[::1]:99\n").serverAndPort?.port, 99)
        XCTAssertEqual(try message("host=example.test\n").serverAndPort?.port, 0)
    }

    func test_sshAskpass_findsTheKeyFileOnlyInSshAddsPassphrasePrompts() {
        XCTAssertEqual(SSHAskpassCommand.keyfile(inPrompt: "Enter passphrase for /home/a/.ssh/id_ed25519: "), "/home/a/.ssh/id_ed25519")
        XCTAssertEqual(SSHAskpassCommand.keyfile(inPrompt: "Enter passphrase for my key: "), "my key")
        XCTAssertEqual(SSHAskpassCommand.keyfile(inPrompt: "Enter passphrase for k (will confirm each use): "), "k")
        XCTAssertNil(SSHAskpassCommand.keyfile(inPrompt: "Bad passphrase, try again for k: "))
        XCTAssertNil(SSHAskpassCommand.keyfile(inPrompt: "Enter passphrase for : "))
        XCTAssertNil(SSHAskpassCommand.keyfile(inPrompt: "Are you sure you want to continue connecting (yes/no)? "))
    }

    func test_dockerServerURL_splitsIntoInternetFields() {
        let full = DockerCredentialCommand.identity(url: "https://registry.test:5000/v2/", username: "u")
        XCTAssertEqual([full.server, full.path], ["registry.test", "v2/"])
        XCTAssertEqual(full.port, 5000)
        XCTAssertEqual(full.protocol, .https)
        let bare = DockerCredentialCommand.identity(url: "127.0.0.1:5000", username: "u")
        XCTAssertEqual(bare.server, "127.0.0.1"); XCTAssertEqual(bare.port, 5000); XCTAssertNil(bare.protocol)
        XCTAssertEqual(DockerCredentialCommand.identity(url: "index.docker.io", username: "u").server, "index.docker.io")
    }
}
