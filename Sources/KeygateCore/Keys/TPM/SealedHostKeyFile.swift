// The on-disk form of a TPM-sealed host key, /var/lib/keygate/host.key.tpm (root,
// 0400, written through AtomicFile). Binary, big-endian, version 1:
//
//   "KGTP"  magic (4 bytes)
//   01      format version
//   01      parent template: the ECC P-256 storage root key (TPMSealing)
//   n       TCTI length (1 byte), then n bytes of TCTI configuration (ASCII)
//   u16 + bytes   marshalled TPM2B_PUBLIC of the sealed data object
//   u16 + bytes   marshalled TPM2B_PRIVATE of the sealed data object
//
// Nothing may follow. Parsing is pure (no TPM, no tpm2-tss): a truncated, padded
// or future-version file is refused here with a message that says what to do.

struct SealedHostKeyFile: Equatable, Sendable {
    static let magic: [UInt8] = Array("KGTP".utf8)
    static let currentVersion: UInt8 = 1
    /// Far above a real file (about 250 bytes); a bigger one is not ours.
    static let maxBytes = 4096

    /// The TCTI configuration the key was sealed through, and is opened through.
    var tcti: String
    /// The parent template (TPMSealing.eccP256StorageRootTemplate).
    var template: UInt8
    var object: SealedTPMObject

    func encoded() -> [UInt8] {
        var out = Self.magic
        out.append(Self.currentVersion)
        out.append(template)
        let tctiBytes = Array(tcti.utf8.prefix(TPMTCTI.maxLength))
        out.append(UInt8(tctiBytes.count))
        out += tctiBytes
        for area in [object.publicArea, object.privateArea] {
            out.append(UInt8(truncatingIfNeeded: area.count >> 8))
            out.append(UInt8(truncatingIfNeeded: area.count))
            out += area
        }
        return out
    }

    /// Parses a file's bytes; `path` names it in errors. `.decode` for anything that is not a complete
    /// version-1 file, with the next step.
    static func decode(_ bytes: [UInt8], path: String) throws -> SealedHostKeyFile {
        var reader = Reader(bytes: bytes)
        guard bytes.count <= maxBytes, reader.take(magic.count) == magic else {
            throw corrupt(path, "it does not start like a Keygate sealed host key")
        }
        guard let version = reader.byte() else { throw corrupt(path, "it is truncated") }
        guard version != 0 else { throw corrupt(path, "its format version is 0") }
        guard version == currentVersion else {
            throw KeychainError.decode("""
                \(path) is in sealed-key format \(version), newer than this keygate understands (\(currentVersion)): upgrade \
                keygate; do not remove the file, it holds the host key
                """)
        }
        guard let template = reader.byte(), let tctiLength = reader.byte(), let tctiBytes = reader.take(Int(tctiLength)),
              let publicArea = reader.sizedArea(), let privateArea = reader.sizedArea() else {
            throw corrupt(path, "it is truncated")
        }
        guard reader.atEnd else { throw corrupt(path, "it has \(bytes.count - reader.offset) unexpected bytes at the end") }
        guard template == TPMSealing.eccP256StorageRootTemplate else {
            throw KeychainError.decode("""
                \(path) names parent template \(template), which this keygate does not know: upgrade keygate; do not remove the \
                file, it holds the host key
                """)
        }
        guard let tcti = String(validating: tctiBytes, as: UTF8.self), (try? TPMTCTI(tcti)) != nil else {
            throw corrupt(path, "its TCTI is not a valid configuration")
        }
        // Each area is itself a TPM2B: its own size prefix must agree with the length around it.
        for area in [publicArea, privateArea] where area.count < 2 || Int(area[0]) << 8 | Int(area[1]) != area.count - 2 {
            throw corrupt(path, "a TPM object in it has an inconsistent size")
        }
        return SealedHostKeyFile(tcti: tcti, template: template,
                                 object: SealedTPMObject(publicArea: publicArea, privateArea: privateArea))
    }

    private static func corrupt(_ path: String, _ why: String) -> KeychainError {
        .decode("""
            \(path) is not a usable sealed host key (\(why)): restore it from a backup, or run `sudo keygate setup-host --tpm \
            --rotate` to make a new host key (this-device-only items sealed for the old one stay unreadable)
            """)
    }

    /// A cursor over the file's bytes; every read is bounds-checked and returns nil past the end.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var atEnd: Bool { offset == bytes.count }

        mutating func take(_ count: Int) -> [UInt8]? {
            guard count >= 0, bytes.count - offset >= count else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        mutating func byte() -> UInt8? { take(1)?.first }

        mutating func sizedArea() -> [UInt8]? {
            guard let size = take(2) else { return nil }
            return take(Int(size[0]) << 8 | Int(size[1]))
        }
    }
}
