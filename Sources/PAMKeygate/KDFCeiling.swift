// The most Argon2id work a login does: root calibrates the cost `keygate init` would
// choose on this machine (about 0.5 s) once per boot and keeps it in
// /run/keygate/kdf-calibration (root's, tmpfs). A login.json asking for more than four
// times that work, or four times that memory (and never less than 256 MiB x 4 passes, what
// calibration may pick on a busy machine), is refused before any derivation: the file is
// the user's own, and a login must not spend 48 s or a gigabyte because it says so.
import KeygateCore

struct KDFCeiling: Equatable {
    static let path = SessionCounter.defaultDirectory + "/kdf-calibration"
    static let factor: UInt64 = 4
    static let mib: UInt64 = 1024 * 1024
    /// The floor of the ceiling: calibration's own memory cap at 4 passes.
    static let floorMemory: UInt64 = 256 * mib
    static let floorPasses: UInt64 = 4

    let passes: UInt64
    let memoryBytes: UInt64
    /// What the calibrated cost took here, in milliseconds.
    let milliseconds: UInt64

    /// Most memory a login derivation may use.
    var maximumMemory: UInt64 { max(memoryBytes * Self.factor, Self.floorMemory) }
    /// Most passes x MiB a login derivation may do.
    var maximumWork: UInt64 { max(passes * (memoryBytes / Self.mib) * Self.factor, Self.floorPasses * (Self.floorMemory / Self.mib)) }

    /// Nil when the cost is within the ceiling, else why it is refused.
    func refusal(passes costPasses: UInt64, memoryBytes costMemory: UInt64) -> String? {
        let work = costPasses * (costMemory / Self.mib)
        guard costMemory > maximumMemory || work > maximumWork else { return nil }
        return """
            login.json asks for Argon2id with \(costPasses) passes and \(costMemory / Self.mib) MiB, more than this machine's \
            calibrated login cost allows (\(maximumWork) pass-MiB, \(maximumMemory / Self.mib) MiB): refused without deriving, \
            the keychain stays locked; the user can run `keygate unlock`, then `keygate passwd` to write a calibrated cost
            """
    }

    /// Root's calibration: read from /run/keygate, or measured now and kept there.
    static func current(directory: String = SessionCounter.defaultDirectory) throws -> KDFCeiling {
        if let kept = read() { return kept }
        let start = MonotonicClock.milliseconds
        let cost = try LoginKeys.calibratedCost()
        // calibrate() derives twice (a probe, then the chosen cost): half is a fair figure.
        let milliseconds = UInt64(max(MonotonicClock.milliseconds - start, 0)) / 2
        let ceiling = KDFCeiling(passes: cost.passes, memoryBytes: cost.memoryBytes, milliseconds: milliseconds)
        ceiling.write()
        return ceiling
    }

    /// The kept calibration, if /run/keygate/kdf-calibration is root's and well formed.
    static func read() -> KDFCeiling? {
        guard case .success(let file) = SafeFile.openForReading(path) else { return nil }
        defer { file.close() }
        guard file.status.uid == 0, file.status.mode & 0o022 == 0 else { return nil }
        guard case .success(let bytes) = SafeFile.readOnce(file.fd, upTo: 128), !bytes.isEmpty else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 3, let passes = UInt64(parts[0]), let memory = UInt64(parts[1]), let ms = UInt64(parts[2]),
              passes > 0, memory >= mib else { return nil }
        return KDFCeiling(passes: passes, memoryBytes: memory, milliseconds: ms)
    }

    /// Keeps the calibration (best effort: a login never fails for it), written whole
    /// under a temporary name and renamed.
    private func write() {
        let directory = SessionCounter.defaultDirectory
        if let e = FileSystem.makeFolder(directory, mode: 0o700), e != .exists { return }
        // Not fsynced: a calibration lost in a crash is made again at the next login.
        try? SafeFile.replace(Self.path, with: Array("\(passes) \(memoryBytes) \(milliseconds)\n".utf8), mode: 0o600,
                              durable: false)
    }
}
