// Writing to the terminal and the standard streams without Foundation, and
// asking whether a stream is a terminal (a secret written to a terminal gets a
// newline; one written to a pipe gets its exact bytes).
import Keygate

enum Console {
    static func out(_ text: String) { write(1, text) }
    static func err(_ text: String) { write(2, text) }

    static func isTerminal(_ fd: Int32) -> Bool { Terminal.isTerminal(fd) }

    static func write(_ fd: Int32, _ text: String) { Descriptor.write(text, to: fd) }
}
