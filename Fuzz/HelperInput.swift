// Fuzz harness for what the credential helpers read from the programs that call them
// (Sources/KeygateCLI/Helpers, the helper verbs): the first byte picks docker's JSON
// (DockerCredentialJSON), git's key=value lines (GitCredentialMessage), an ssh-add
// prompt (SSHAskpassCommand.keyfile) or a docker server URL (DockerCredentialCommand
// .identity); the rest is the input. Invariants: nothing crashes; parsing is
// deterministic; a refusal has a message; every decoded JSON value re-encodes (Go's
// escaping) and decodes to the same bytes; git's password is exactly the bytes after
// the last "password=" line's '='; a key file found in a prompt is non-empty and
// inside it. Delegates to those types (nothing is stored, nothing is run).
@testable import KeygateCLI
import Keygate

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHelperInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let kind = input.int(below: 4)
    let bytes = input.rest()
    switch kind {
    case 0: fuzzDockerJSON(bytes)
    case 1: fuzzGitMessage(bytes)
    case 2:
        let prompt = String(decoding: bytes, as: UTF8.self)
        let found = SSHAskpassCommand.keyfile(inPrompt: prompt)
        require(found == SSHAskpassCommand.keyfile(inPrompt: prompt), "keyfile(inPrompt:) is not deterministic")
        if let found { require(!found.isEmpty && prompt.contains(found), "a key file that is not in the prompt: \(found.debugDescription)") }
        FuzzStats.record(refused: found == nil)
    default:
        let url = String(decoding: bytes, as: UTF8.self)
        let identity = DockerCredentialCommand.identity(url: url, username: "u")
        require(identity == DockerCredentialCommand.identity(url: url, username: "u"), "identity(url:) is not deterministic")
        require(url.contains(identity.server), "a server that is not in the URL: \(identity.server.debugDescription)")
        FuzzStats.record(refused: false)
    }
    return 0
}

private func fuzzDockerJSON(_ bytes: [UInt8]) {
    let decode = { () -> Result<[String: [UInt8]], DockerCredentialJSON.Malformed> in
        bytes.withUnsafeBytes { raw in Result { () throws(DockerCredentialJSON.Malformed) in try DockerCredentialJSON.decodeObject(raw) } }
    }
    let first = decode(), second = decode()
    switch (first, second) {
    case (.success(let a), .success(let b)):
        require(a == b, "JSON decoding is not deterministic")
        for (key, value) in a {
            var encoded: [UInt8] = Array("{\"k\":".utf8)
            DockerCredentialJSON.appendString(value, to: &encoded)
            encoded += Array("}".utf8)
            let again = encoded.withUnsafeBytes { try? DockerCredentialJSON.decodeObject($0) }
            // Bytes that are not UTF-8 need not survive (JSON text is Unicode); UTF-8 must.
            if String(validating: value, as: UTF8.self) != nil {
                require(again?["k"] == value, "the value of \(key.debugDescription) does not survive encode and decode")
            }
        }
        FuzzStats.record(refused: false)
    case (.failure(let a), .failure(let b)):
        require(!a.message.isEmpty && a.message == b.message, "a refusal without a message, or two different ones")
        FuzzStats.record(refused: true)
    default:
        require(false, "JSON decoding is not deterministic")
    }
}

private func fuzzGitMessage(_ bytes: [UInt8]) {
    var copy = bytes
    guard let secure = try? SecureBytes(consuming: &copy), let message = try? GitCredentialMessage(parsing: secure) else {
        FuzzStats.record(refused: true)
        return
    }
    // The expected password: the value of the last line whose key is exactly "password".
    var expected: [UInt8]?
    for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
        var l = Array(line)
        if l.last == 0x0D { l.removeLast() }
        if let eq = l.firstIndex(of: UInt8(ascii: "=")), Array(l[..<eq]) == Array("password".utf8) { expected = Array(l[(eq + 1)...]) }
    }
    require(message.password?.unprotectedCopy() == expected, "the password is not the bytes after password=")
    if let (server, _) = message.serverAndPort { require(message.host?.hasPrefix(server) == true, "a server that is not the host's start") }
    FuzzStats.record(refused: message.query() == nil)
}
