// Collects an answer typed or printed by a helper, byte by byte, in locked memory,
// so that a password never passes through a String or an unlocked array. Storage
// is a SecureBytes (Crypto/); the caller supplies the bytes from its file descriptor.
import KeygateCore

/// A fixed-capacity buffer in locked memory that grows an answer one chunk at a time.
final class SecretLineBuffer {
    private let storage: SecureBytes
    private(set) var count = 0

    init(capacity: Int = PromptAdvice.maxAnswerBytes) throws {
        storage = try SecureBytes(count: capacity)
    }

    var capacity: Int { storage.count }
    var isFull: Bool { count >= storage.count }

    /// Appends one byte. Returns false (and keeps nothing) when the buffer is full.
    func append(_ byte: UInt8) -> Bool {
        guard count < storage.count else { return false }
        storage.withUnsafeMutableBytes { $0[count] = byte }
        count += 1
        return true
    }

    /// Reads at most the free space from `fd` straight into locked memory with `body`
    /// (which returns what read(2) returns). Returns that value.
    func fill(_ body: (UnsafeMutableRawPointer, Int) -> Int) -> Int {
        let free = storage.count - count
        guard free > 0 else { return 0 }
        let got = storage.withUnsafeMutableBytes { buffer -> Int in
            guard let base = buffer.baseAddress else { return 0 }
            return body(base + count, free)
        }
        if got > 0 { count += got }
        return got
    }

    /// The last byte, if any.
    var last: UInt8? {
        guard count > 0 else { return nil }
        return storage.withUnsafeBytes { $0[count - 1] }
    }

    /// Forgets the last byte (it stays zeroed in locked memory).
    func dropLast() {
        guard count > 0 else { return }
        storage.withUnsafeMutableBytes { $0[count - 1] = 0 }
        count -= 1
    }

    /// The collected bytes in a SecureBytes of their exact size. The buffer itself is
    /// zeroed when it is freed.
    func finish() throws -> SecureBytes {
        try storage.slice(from: 0, length: count)
    }
}
