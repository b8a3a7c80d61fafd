// Spawns the command of `keygate exec` with its secrets and waits for it. Pipes are
// filled BEFORE the spawn (a secret is at most 64 KiB; the pipe is grown to hold it),
// so no write can block on a child that never reads and no SIGPIPE can hit keygate.
// The environment entries holding secrets live in mlock'd memory wiped after the
// spawn. Spawn with a PATH search, no shell; SIGINT/SIGQUIT are ignored while waiting
// (as system(3) does) and reset to their defaults in the child.
import Keygate

enum ChildProcess {
    /// Pipe ends are kept at or above this number, so the dup2s onto the requested
    /// descriptors (3-99) can never clobber one another.
    static let firstPrivateFD: Int32 = 100

    /// `secrets` is emptied once they are in the child's pipes and environment, so no
    /// copy stays in keygate's memory while it waits (LeakTests dumps it to check).
    /// `command` is argv for the child, as bytes (they need not be UTF-8).
    static func run(_ command: [[UInt8]], secrets: inout [(ExecCommand.Request, SecureBytes)],
                    environment: KeygateEnvironment) throws -> Int32 {
        var spawn = Spawn(bytes: command)
        spawn.searchPath = true
        spawn.defaultSignals = [SignalName.interrupt, .quit, .brokenPipe].map(\.number)
        var readEnds: [Descriptor] = []
        var secretEntries: [String: SecureEnvEntry] = [:]
        for (request, secret) in secrets {
            switch request.destination {
            case .environment(let name):
                secretEntries[name] = try SecureEnvEntry(name: name, secret: secret)
            case .standardInput, .descriptor:
                let end = try filledPipe(secret)
                readEnds.append(end)
                let target: Int32
                if case .descriptor(let n) = request.destination { target = n } else { target = 0 }
                spawn.descriptors[target] = .descriptor(end.raw)
            }
        }
        let commandName = String(decoding: command.first ?? [], as: UTF8.self)
        guard !commandName.isEmpty else { throw KeychainError(.param, "exec needs a command after --") }
        spawn.environment = environment.childEnvironment.filter { secretEntries[$0.key] == nil }.map { "\($0.key)=\($0.value)" }.sorted()
        spawn.environmentEntries = secretEntries.values.map(\.pointer)

        let oldInt = IgnoredSignal(.interrupt)
        let oldQuit = IgnoredSignal(.quit)
        defer { oldInt.restore(); oldQuit.restore() }

        let started = spawn.start()
        spawn.environmentEntries = []
        secretEntries.removeAll()  // wipes the environment copies
        secrets.removeAll()        // and the secrets themselves (SecureBytes zero on free)
        for end in readEnds { end.close() }
        let child: Spawn.Child
        switch started {
        case .success(let running): child = running
        case .failure(let e):
            Console.err("keygate: cannot run '\(commandName)': \(e.text): check the command name and PATH\n")
            return 127
        }
        switch child.wait() {
        case .success(let exit): return exit.shellStatus
        case .failure(let e):
            throw KeychainError(.notAvailable, "lost track of '\(commandName)' (\(e.text)): check whether it finished")
        }
    }

    /// A close-on-exec pipe holding the whole secret, its write end closed; returns the
    /// read end, at a descriptor >= firstPrivateFD.
    private static func filledPipe(_ secret: SecureBytes) throws -> Descriptor {
        let pipe: (read: Descriptor, write: Descriptor)
        switch Descriptor.pipe(lowest: firstPrivateFD) {
        case .success(let made): pipe = made
        case .failure(let e): throw KeychainError(.notAvailable, "cannot create a pipe (\(e.text)): raise the open-file limit")
        }
        if secret.count >= 65536 {
            pipe.write.setPipeCapacity(Int32(secret.count + 4096))
        }
        do {
            try secret.write(toFileDescriptor: pipe.write.raw)
        } catch {
            throw KeychainError(.notAvailable, "cannot hand the secret to the command through a pipe: the secret is larger than the pipe; use --env")
        }
        return pipe.read
    }
}

/// "NAME=secret\0" in mlock'd memory, wiped and freed in deinit.
private final class SecureEnvEntry {
    let pointer: UnsafeMutablePointer<CChar>
    private let size: Int

    init(name: String, secret: SecureBytes) throws {
        let hasNUL = secret.withUnsafeBytes { $0.contains(0) }
        if hasNUL {
            throw KeychainError(.param, "the secret for \(name) contains a NUL byte, which an environment variable cannot hold: use --stdin or --fd")
        }
        let prefix = Array((name + "=").utf8)
        size = prefix.count + secret.count + 1
        pointer = .allocate(capacity: size)
        LockedPages.lock(pointer, size)
        let raw = UnsafeMutableRawPointer(pointer)
        prefix.withUnsafeBytes { if let base = $0.baseAddress { raw.copyMemory(from: base, byteCount: $0.count) } }
        secret.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { (raw + prefix.count).copyMemory(from: base, byteCount: bytes.count) }
        }
        raw.storeBytes(of: 0, toByteOffset: size - 1, as: UInt8.self)
    }

    deinit {
        LockedPages.wipeAndUnlock(pointer, size)
        pointer.deallocate()
    }
}
