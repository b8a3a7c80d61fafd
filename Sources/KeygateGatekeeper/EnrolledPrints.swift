// The digest of a user's enrolled fingerprints (docs/GATEKEEPER.md, "The enrolled set"),
// computed by the gatekeeper as root from fprintd's own storage: /var/lib/fprint/USER/
// DRIVER/DEVICE/FINGER, root-only folders (test-hook builds read KEYGATE_TEST_FPRINT_DIR,
// fprint-session's private STATE_DIRECTORY, instead). biometryCurrentSet items are bound
// to it (GateSecrets.enrolledSetPair), as current-set items are to the shadow entry.
//
// What it covers, for every print file, in path order: the device it was enrolled on
// (driver and device id), the finger, the template bytes, and the time fprintd wrote
// them (mtime, to the nanosecond). So enrolling a finger, deleting one, or enrolling one
// again changes it (a re-enrollment writes a new file, even where a driver would give the
// same bytes), and nothing else does: a verification, a password change or a reboot
// leaves the files alone, and a backup restored with its times keeps it. Nothing of the
// user's can change it: the folders are root's. fprintd's D-Bus list of fingers is not
// used: it names fingers, so a finger enrolled again under the same name would not show.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire
import KeygateSystemBus

struct EnrolledPrints {
    /// BLAKE2b-256 over the prints (see the file comment); nil when no finger is enrolled.
    let digest: [UInt8]?
    /// How many prints (fingers on all devices) are enrolled.
    let count: Int

    static let maxPrints = 64
    static let maxPrintBytes = 1 << 20

    /// The user's enrolled prints now. A storage folder that cannot be read as root fails
    /// (.notAvailable, with the fix), never counts as "no finger".
    static func of(userName: String, environment: KeygateEnvironment) throws -> EnrolledPrints {
        guard !userName.isEmpty, !userName.contains("/"), userName != ".", userName != ".." else {
            throw KeychainError.param("'\(userName)' is not a user name fprintd keeps prints for")
        }
        let folder = FprintdProbe.storageRoot(environment) + "/" + userName
        var entries: [(path: String, data: [UInt8], mtime: (seconds: Int, nanoseconds: Int))] = []
        try collect(folder, relative: "", depth: 0, into: &entries)
        guard !entries.isEmpty else { return EnrolledPrints(digest: nil, count: 0) }
        entries.sort { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        var message = Array("keygate.fprint.enrolled-set.v1".utf8)
        for entry in entries {
            message += GateSecrets.u32(UInt32(entry.path.utf8.count)) + Array(entry.path.utf8)
            message += GateSecrets.u64(UInt64(bitPattern: Int64(entry.mtime.seconds))) + GateSecrets.u32(UInt32(clamping: entry.mtime.nanoseconds))
            message += GenericHash.publicDigest(entry.data, key: Array("keygate.fprint.print.v1".utf8), outputBytes: 32)
        }
        return EnrolledPrints(digest: GenericHash.publicDigest(message, key: Array("keygate.fprint.enrolled.v1".utf8), outputBytes: 32),
                              count: entries.count)
    }

    /// DRIVER/DEVICE/FINGER files under `path` (depth 0 is the user's folder).
    private static func collect(_ path: String, relative: String, depth: Int,
                                into entries: inout [(path: String, data: [UInt8], mtime: (seconds: Int, nanoseconds: Int))]) throws {
        let names: [String]
        switch DirectoryNames.list(path) {
        case .success(let listed): names = listed
        case .failure(let e):
            if e == .noEntry || e == .notDirectory { return }
            throw KeychainError.notAvailable("""
                the gatekeeper could not read fprintd's prints in \(path): \(e.text); check the folder \
                (root's, mode 0700)
                """)
        }
        for name in names {
            let full = path + "/" + name
            let rel = relative.isEmpty ? name : relative + "/" + name
            guard case .success(let info) = FileStatus.of(full, links: .refuse) else { continue }
            switch info.kind {
            case .directory where depth < 2:
                try collect(full, relative: rel, depth: depth + 1, into: &entries)
            case .regular where depth == 2:
                guard entries.count < maxPrints else {
                    throw KeychainError.notAvailable("more than \(maxPrints) prints in \(path): check fprintd's storage")
                }
                guard let data = try AtomicFile.read(full, maxBytes: maxPrintBytes) else { continue }
                entries.append((rel, data, (info.modifiedSeconds, info.modifiedNanoseconds)))
            default:
                continue   // links and anything else are not fprintd's prints
            }
        }
    }
}
