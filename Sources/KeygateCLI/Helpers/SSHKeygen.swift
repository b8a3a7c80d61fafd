// What Keygate asks of OpenSSH's ssh-keygen: a key file's fingerprint
// (`ssh-keygen -l -f KEY`), and whether a passphrase opens it (`ssh-keygen -y -f
// KEY`). The passphrase never goes into argv or the environment: ssh-keygen is run
// with SSH_ASKPASS set to this very keygate binary and SSH_ASKPASS_REQUIRE=force,
// and with the passphrase in a pipe on its standard input, which its askpass child
// inherits; keygate started that way (KEYGATE_SSH_KEYGEN_FEED=1, no secret in it)
// copies its standard input to its standard output and exits (`feed`). posix_spawnp,
// no shell.
import Keygate

enum SSHKeygen {
    /// The environment variable that makes keygate the passphrase feeder for ssh-keygen.
    static let feedVariable = "KEYGATE_SSH_KEYGEN_FEED"

    /// The SHA256 fingerprint of the key in `path` ("SHA256:…"), from the key file (or KEY.pub).
    static func fingerprint(of path: String, environment: KeygateEnvironment) throws -> String {
        let (status, out) = try run(["ssh-keygen", "-l", "-E", "sha256", "-f", path], stdin: nil, environment: environment.childEnvironment)
        let fields = String(decoding: out, as: UTF8.self).split(separator: " ")
        guard status == 0, fields.count >= 2, fields[1].hasPrefix("SHA256:") else {
            throw KeychainError(.param, """
                cannot read the key \(path) (ssh-keygen -l failed): check that it is an SSH private key with its public half inside \
                or in \(path).pub
                """)
        }
        return String(fields[1])
    }

    /// Whether `passphrase` opens the private key in `path` (ssh-keygen -y succeeds).
    static func opens(_ path: String, with passphrase: SecureBytes, environment: KeygateEnvironment) throws -> Bool {
        guard let me = selfPath() else {
            throw KeychainError(.notAvailable, "cannot find the keygate binary (/proc/self/exe) to check the passphrase")
        }
        var env = environment.childEnvironmentWithoutDisplay
        env["SSH_ASKPASS"] = me
        env["SSH_ASKPASS_REQUIRE"] = "force"
        env[feedVariable] = "1"
        let (status, _) = try run(["ssh-keygen", "-y", "-f", path], stdin: passphrase, environment: env)
        return status == 0
    }

    /// The feeder's whole job: standard input (the passphrase) to standard output, one line.
    static func feed() -> Int32 {
        guard let input = try? SecureBytes.read(fileDescriptor: 0, maxBytes: 64 * 1024),
              (try? input.write(toFileDescriptor: 1)) != nil else { return 1 }
        return 0
    }

    private static func selfPath() -> String? {
        FileSystem.linkTarget("/proc/self/exe")
    }

    /// Runs argv with `stdin` (a pipe holding those bytes, or /dev/null) and returns the exit
    /// status and standard output; standard error is discarded.
    private static func run(_ argv: [String], stdin: SecureBytes?, environment: [String: String]) throws -> (Int32, [UInt8]) {
        guard case .success(let input) = Descriptor.pipe(), case .success(let output) = Descriptor.pipe() else {
            throw KeychainError(.notAvailable, "cannot make a pipe for ssh-keygen (\(SystemErrno.current.text)): raise the open-file limit")
        }
        // The passphrase is small (a pipe holds 64 KiB): written and closed before the spawn.
        if let stdin { try? stdin.write(toFileDescriptor: input.write.raw) }
        input.write.close()
        var spawn = Spawn(argv)
        spawn.searchPath = true
        spawn.environment = environment.map { "\($0.key)=\($0.value)" }.sorted()
        spawn.descriptors = [0: .descriptor(input.read.raw), 1: .descriptor(output.write.raw), 2: .null]
        let started = spawn.start()
        input.read.close()
        output.write.close()
        let child: Spawn.Child
        switch started {
        case .success(let running): child = running
        case .failure(let e): throw KeychainError(.notAvailable, "cannot run ssh-keygen (\(e.text)): install openssh-client")
        }
        // Everything ssh-keygen prints (a fingerprint line); a read error ends it like EOF.
        let out = (try? SafeFile.readAll(output.read.raw, limit: Int.max - 4096).get()) ?? []
        output.read.close()
        guard case .success(let exit) = child.wait() else { throw KeychainError(.notAvailable, "lost track of ssh-keygen") }
        return (exit.shellStatus, out)
    }
}
