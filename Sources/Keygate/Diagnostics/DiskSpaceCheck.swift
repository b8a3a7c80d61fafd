// Doctor check: the free space and writability of the file system that holds the data
// folder (its nearest existing folder when it is not made yet), from statvfs(3) (VolumeSpace). A full
// disk makes every write fail (add, update, passwd, the embedded store's items); a
// read-only one too, while reads keep working.

enum DiskSpaceCheck {
    static let name = "disk-space"
    /// Below this, a write of a protector or an item may not fit.
    static let minimumFree: UInt64 = 1024 * 1024

    static func run(dataDirectory: String) -> DiagnosticResult {
        var path = dataDirectory
        var info: VolumeSpace
        while true {
            switch VolumeSpace.of(path) {
            case .success(let space): info = space
            case .failure(let e):
                guard e == .noEntry, path != "/", !path.isEmpty else {
                    return DiagnosticResult(name, .warn, "cannot look at \(path): \(e.text)",
                                            advice: "check that the data folder's parent exists and is yours")
                }
                path = path.split(separator: "/").dropLast().reduce("") { $0 + "/" + $1 }
                if path.isEmpty { path = "/" }
                continue
            }
            break
        }
        let free = info.availableBytes
        let shown = free >= 10 * 1024 * 1024 ? "\(free / (1024 * 1024)) MiB" : "\(free / 1024) KiB"
        if info.isReadOnly {
            return DiagnosticResult(name, .warn, "\(path) is on a read-only file system: reads work, but adding or changing items fails",
                                    advice: "remount it read-write to change items")
        }
        if free < minimumFree {
            return DiagnosticResult(name, .fail, "\(shown) free where \(path) is: the disk is full, so adding items, keygate passwd "
                                    + "and unlocking's records fail (reads still work)",
                                    advice: "free some space on that file system, then run keygate doctor again")
        }
        return DiagnosticResult(name, .ok, "\(shown) free where \(path) is")
    }
}
