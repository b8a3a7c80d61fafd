// Moving secrets between locked memory and file descriptors without an
// intermediate copy in ordinary memory: reading a secret piped on stdin, and
// writing a secret to stdout for `keygate get`.

extension SecureBytes {
    /// Reads everything from `fd` until EOF into locked memory. Throws `.param` when
    /// there are more than `maxBytes`.
    public static func read(fileDescriptor fd: Int32, maxBytes: Int) throws -> SecureBytes {
        let capacity = maxBytes + 1
        let buffer = try SecureBytes(count: capacity)
        let filled = try buffer.withUnsafeMutableBytes { raw in
            switch SafeFile.readFully(fd, into: raw) {
            case .success(let count): return count
            case .failure(let e):
                throw KeychainError.param("""
                    could not read the secret from standard input (errno \(e.code)): pipe the secret in, e.g. printf %s \"$SECRET\" | \
                    keygate add …
                    """)
            }
        }
        if filled > maxBytes {
            throw KeychainError.param("the secret on standard input is longer than \(maxBytes) bytes: store a key or a path to the data instead")
        }
        return try buffer.slice(from: 0, length: filled)
    }

    /// Writes all the bytes to `fd`, retrying short writes and EINTR.
    public func write(toFileDescriptor fd: Int32) throws {
        try withUnsafeBytes { raw in
            if let failure = SafeFile.writeAll(fd, raw) {
                throw KeychainError.param("could not write the secret to the output (errno \(failure.code)): check that the output is writable")
            }
        }
    }
}
