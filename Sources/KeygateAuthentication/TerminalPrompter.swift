// Asks for a secret on the controlling terminal, as sudo and passwd do: the prompt
// goes to /dev/tty (not stdout, so pipes stay clean), echo is off while the person
// types (TerminalEchoGuard), and the answer goes byte by byte into locked memory
// (SecretLineBuffer). Ctrl-D on an empty line cancels.
import KeygateCore

struct TerminalPrompter: Prompter {
    /// The controlling terminal, however stdin and stdout are redirected.
    static let path = "/dev/tty"

    /// True when this process has a controlling terminal that can be opened.
    static var isAvailable: Bool {
        let fd = SafeFile.open(path, .readWrite | .noControllingTerminal, links: .follow)
        guard fd >= 0 else { return false }
        Descriptor.close(fd)
        return true
    }

    func ensureAvailable() throws {
        guard Self.isAvailable else { throw KeychainError.interactionNotAllowed(PromptAdvice.noPrompt) }
    }

    func notify(_ message: String) {
        let fd = SafeFile.open(Self.path, .writeOnly | .noControllingTerminal, links: .follow)
        guard fd >= 0 else { return }
        Descriptor.write(message + "\n", to: fd)
        Descriptor.close(fd)
    }

    func notify(_ before: String, secret: SecureBytes, _ after: String) {
        let fd = SafeFile.open(Self.path, .writeOnly | .noControllingTerminal, links: .follow)
        guard fd >= 0 else { return }
        PromptNotice.write(before, secret: secret, after, to: fd)
        Descriptor.close(fd)
    }

    func readSecret(prompt: String) throws -> SecureBytes? {
        let fd = SafeFile.open(Self.path, .readWrite | .noControllingTerminal, links: .follow)
        guard fd >= 0 else { throw KeychainError.interactionNotAllowed(PromptAdvice.noPrompt) }
        defer { Descriptor.close(fd) }
        return try Self.readSecret(prompt: prompt, fd: fd)
    }

    /// The prompt on `fd` (a terminal): write, echo off, read one line, restore, newline.
    /// After Ctrl-Z and `fg` the prompt starts again, as sudo's does; Ctrl-C cancels (nil).
    static func readSecret(prompt: String, fd: Int32) throws -> SecureBytes? {
        while true {
            Descriptor.write(prompt, to: fd)
            let (line, signal) = try TerminalEchoGuard.withEchoOff(fd: fd) { readByte in
                try readLine(readByte)
            }
            Descriptor.write("\n", to: fd)  // the person's Enter was not echoed
            if signal == 0 { return line ?? nil }
            switch TerminalEchoGuard.passOn(signal) {
            case .resumed: continue
            case .canceled: return nil
            }
        }
    }

    /// Reads up to a newline (or carriage return) into locked memory. nil on EOF with
    /// nothing typed (Ctrl-D) or when a guarded signal interrupted the read.
    private static func readLine(_ readByte: TerminalEchoGuard.ReadByte) throws -> SecureBytes? {
        let buffer = try SecretLineBuffer()
        var overflow = false
        var sawAnything = false
        while true {
            if buffer.isFull {
                // Keep reading to the end of the line, but keep none of it.
                overflow = true
                var scratch: UInt8 = 0
                let n = readByte(&scratch)
                let ended = n <= 0 || scratch == 0x0A || scratch == 0x0D
                scratch = 0
                if n == TerminalEchoGuard.interruptedBySignal { return nil }
                if ended { break }
                continue
            }
            let n = buffer.fill { pointer, _ in readByte(pointer.assumingMemoryBound(to: UInt8.self)) }
            if n == TerminalEchoGuard.interruptedBySignal { return nil }
            if n < 0 {
                throw KeychainError.interactionNotAllowed(
                    "reading the password from the terminal failed (\(TerminalEchoGuard.errnoText())): run from a terminal or set KEYGATE_ASKPASS")
            }
            if n == 0 {
                if !sawAnything { return nil }  // Ctrl-D on an empty line: canceled
                break
            }
            sawAnything = true
            if let last = buffer.last, last == 0x0A || last == 0x0D {
                buffer.dropLast()
                break
            }
        }
        if overflow {
            throw KeychainError.param("the answer is longer than \(PromptAdvice.maxAnswerBytes) bytes: type a shorter password")
        }
        return try buffer.finish()
    }
}
