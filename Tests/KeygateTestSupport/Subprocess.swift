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
        if let stdin {
            inPipe.fileHandleForWriting.write(stdin)
            try? inPipe.fileHandleForWriting.close()
        }
        // Output is collected as it arrives. A background grandchild that inherits the
        // pipes must not hold the test up: once the process has exited, we wait at most
        // two seconds for end-of-file, then take what arrived.
        let collected = OutputCollector()
        outPipe.fileHandleForReading.readabilityHandler = { h in collected.append(h.availableData, toError: false) }
        errPipe.fileHandleForReading.readabilityHandler = { h in collected.append(h.availableData, toError: true) }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2000) }
        if process.isRunning {
            process.terminate()
            usleep(200_000)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        let drainUntil = Date().addingTimeInterval(2)
        while !collected.bothClosed && Date() < drainUntil { usleep(2000) }
        outPipe.fileHandleForReading.readabilityHandler = nil
        errPipe.fileHandleForReading.readabilityHandler = nil
        let (outData, errData) = collected.snapshot()
        return ProcessResult(status: process.terminationStatus, stdout: outData, stderr: errData)
    }
}

/// Thread-safe accumulation of a child's two output streams.
private final class OutputCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var out = Data(), err = Data()
    private var outClosed = false, errClosed = false

    func append(_ data: Data, toError: Bool) {
        lock.withLock {
            if data.isEmpty {
                if toError { errClosed = true } else { outClosed = true }
            } else if toError {
                err.append(data)
            } else {
                out.append(data)
            }
        }
    }

    var bothClosed: Bool { lock.withLock { outClosed && errClosed } }
    func snapshot() -> (Data, Data) { lock.withLock { (out, err) } }
}
