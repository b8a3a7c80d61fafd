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
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        group.enter()
        DispatchQueue.global().async { outData = outPipe.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        group.enter()
        DispatchQueue.global().async { errData = errPipe.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2000) }
        if process.isRunning {
            kill(-process.processIdentifier, SIGKILL)
            process.terminate()
        }
        process.waitUntilExit()
        group.wait()
        return ProcessResult(status: process.terminationStatus, stdout: outData, stderr: errData)
    }
}
