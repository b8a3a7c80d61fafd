// Runs a program to completion with given stdin and environment, capturing its
// output. Tests use it to drive the real `keygate` binary and system tools.
import Foundation

public struct ProcessResult: Sendable {
    public let status: Int32
    public let stdout: Data
    public let stderr: Data
    public var out: String { String(decoding: stdout, as: UTF8.self) }
    public var err: String { String(decoding: stderr, as: UTF8.self) }
}

public enum Subprocess {
    /// Runs `argv` (argv[0] is looked up in PATH when it has no slash). `environment`
    /// nil inherits this process's environment. Standard input is `stdin`, or
    /// /dev/null when nil. The call waits at most `timeout` seconds, then kills.
    @discardableResult
    public static func run(_ argv: [String], stdin: Data? = nil, environment: [String: String]? = nil,
                           currentDirectory: String? = nil, timeout: TimeInterval = 120) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = argv
        if let environment { process.environment = environment }
        if let currentDirectory { process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory) }
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        let inPipe = Pipe()
        process.standardInput = stdin == nil ? FileHandle(forReadingAtPath: "/dev/null") : inPipe
        try process.run()
        // Each stream is drained by its own thread with plain blocking read(2) until
        // end-of-file, and standard input is fed by a third, so a child that writes
        // more than a pipe's worth before reading all its input cannot deadlock us.
        // (Foundation's readabilityHandler may report a spurious empty read, which
        // once cut a man page short on a loaded CI machine.)
        let outReader = StreamReader(outPipe.fileHandleForReading)
        let errReader = StreamReader(errPipe.fileHandleForReading)
        if let stdin {
            let writer = inPipe.fileHandleForWriting
            Thread.detachNewThread {
                signal(SIGPIPE, SIG_IGN)
                try? writer.write(contentsOf: stdin)
                try? writer.close()
            }
        }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2000) }
        if process.isRunning {
            process.terminate()
            usleep(200_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        // A background grandchild that inherits the pipes must not hold the test up:
        // once the process has exited, wait at most two seconds for end-of-file, then
        // take what arrived.
        let drainUntil = Date().addingTimeInterval(2)
        while !(outReader.finished && errReader.finished) && Date() < drainUntil { usleep(2000) }
        return ProcessResult(status: process.terminationStatus, stdout: outReader.data, stderr: errReader.data)
    }
}

/// Reads one of a child's output streams to end-of-file on a thread of its own.
private final class StreamReader: @unchecked Sendable {
    private let lock = NSLock()
    private var collected = Data()
    private var done = false

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if n > 0 {
                    lock.withLock { collected.append(contentsOf: buffer[0..<n]) }
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            lock.withLock { done = true }
            // The handle is kept alive until here, so its descriptor is never closed under the read.
            withExtendedLifetime(handle) {}
        }
    }

    var finished: Bool { lock.withLock { done } }
    var data: Data { lock.withLock { collected } }
}
