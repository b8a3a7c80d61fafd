// Byte-level input and output for the credential-helper verbs (git-credential,
// docker-credential, ssh-askpass): writing raw bytes, possibly from locked memory,
// to a descriptor with short-write and EINTR retries, and splitting a locked
// buffer into lines without copying it into a String. Secrets stay SecureBytes;
// only the non-secret fields around them become Strings.
import Keygate

enum HelperIO {
    /// Writes every byte of `raw` to `fd`.
    static func write(_ fd: Int32, _ raw: UnsafeRawBufferPointer) throws {
        if let failure = SafeFile.writeAll(fd, raw) {
            throw KeychainError(.param, "could not write the answer to the calling program (errno \(failure.code))")
        }
    }

    /// Writes a plain (non-secret) string.
    static func write(_ fd: Int32, _ text: String) throws {
        if let failure = Descriptor.write(text, to: fd) {
            throw KeychainError(.param, "could not write the answer to the calling program (errno \(failure.code))")
        }
    }

    /// The half-open byte ranges of each line in `raw` (split at LF, a trailing CR dropped).
    static func lines(_ raw: UnsafeRawBufferPointer) -> [Range<Int>] {
        var out: [Range<Int>] = []
        var start = 0
        for i in 0..<raw.count where raw[i] == 0x0A {
            out.append(start..<(i > start && raw[i - 1] == 0x0D ? i - 1 : i))
            start = i + 1
        }
        if start < raw.count { out.append(start..<raw.count) }
        return out
    }

    /// A locked copy of `range` of `raw`.
    static func secure(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>) throws -> SecureBytes {
        try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[range]))
    }

    /// `range` of `raw` as a String (for non-secret fields only).
    static func string(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: raw[range]), as: UTF8.self)
    }
}
