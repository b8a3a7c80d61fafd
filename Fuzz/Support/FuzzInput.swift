// Shared by every fuzz harness: a cursor that turns libFuzzer's bytes into the typed
// values a harness needs (small numbers, byte strings, strings that may be invalid
// UTF-8), and `require`, which stops the process (a crash libFuzzer records) when an
// invariant fails. Harness code only: the library never traps.
import Glibc

struct FuzzInput {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        if let data, size > 0 {
            bytes = Array(UnsafeBufferPointer(start: data, count: size))
        } else {
            bytes = []
        }
    }

    static func all(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    var isEmpty: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A number in 0..<bound (0 when bound is 0).
    mutating func int(below bound: Int) -> Int {
        guard bound > 0 else { return 0 }
        return Int(byte()) % bound
    }

    mutating func uint32() -> UInt32 {
        (0..<4).reduce(UInt32(0)) { value, _ in value << 8 | UInt32(byte()) }
    }

    /// A length byte, then that many bytes (fewer at the end of the input).
    mutating func chunk() -> [UInt8] {
        let length = Int(byte())
        let end = min(bytes.count, offset + length)
        defer { offset = end }
        return offset < end ? Array(bytes[offset..<end]) : []
    }

    /// A chunk decoded as UTF-8, invalid sequences replaced (as the CLI and libraries see them).
    mutating func string() -> String { String(decoding: chunk(), as: UTF8.self) }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return offset < bytes.count ? Array(bytes[offset...]) : []
    }
}

/// Stops the fuzzer with a message when an invariant does not hold.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        fputs("fuzz invariant failed: \(message())\n", stderr)
        abort()
    }
}

/// Counts executions and refused inputs; prints them when the fuzzer exits, for the
/// closing figures ("fuzz-stats: N executions, M refused").
enum FuzzStats {
    nonisolated(unsafe) static var executions = 0
    nonisolated(unsafe) static var refused = 0
    nonisolated(unsafe) static var registered = false

    static func record(refused wasRefused: Bool) {
        if !registered {
            registered = true
            atexit { fputs("fuzz-stats: \(FuzzStats.executions) executions, \(FuzzStats.refused) inputs refused\n", stderr) }
        }
        executions += 1
        if wasRefused { refused += 1 }
    }
}
