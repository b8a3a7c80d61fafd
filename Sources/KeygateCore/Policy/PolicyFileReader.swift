// Reads a folder of *.policy files the way sudo and pam-u2f read their configuration:
// the folder and each file are opened without following a symbolic link (the file
// relative to the folder's descriptor, so the folder cannot be swapped in between),
// and a system file counts only when it is a regular file owned by root and not
// writable by group or others, at most 64 KiB. A user's file may be owned by that
// user. Parsing is delegated to PolicyParser.
internal import Glibc

/// One file (or an absent folder) as loaded, before merging.
struct LoadedPolicyFile: Sendable {
    enum State: Sendable {
        case parsed(ParsedPolicy)
        /// Not read because of where or what it is (a link, wrong owner or mode, too large, unreadable).
        case refused(String)
        /// The folder does not exist.
        case absent
    }

    var path: String
    var layer: PolicyLayer
    var state: State

    /// "read", "refused: …", "error: file:line:col: …" (the first error, and how many more), "absent".
    var stateText: String {
        switch state {
        case .absent: return "absent"
        case .refused(let why): return "refused: \(why)"
        case .parsed(let parsed):
            guard let first = parsed.errors.first else { return "read" }
            let more = parsed.errors.count - 1
            return "error: \(first)" + (more > 0 ? " (and \(more) more; see keygate policy check)" : "")
        }
    }

    /// The file is unusable: refused, or has parse errors.
    var isBroken: Bool {
        switch state {
        case .absent: return false
        case .refused: return true
        case .parsed(let parsed): return !parsed.errors.isEmpty
        }
    }
}

enum PolicyFileReader {
    /// Reads `folder`'s *.policy files in lexical (byte) order. `uid` is the user whose own files count in the user layer.
    static func readFolder(_ folder: String, layer: PolicyLayer, uid: UInt32) -> [LoadedPolicyFile] {
        let flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (layer.isSystem ? O_NOFOLLOW : 0)
        let dirfd = open(folder, flags)
        guard dirfd >= 0 else {
            let e = errno
            if e == ENOENT { return [LoadedPolicyFile(path: folder, layer: layer, state: .absent)] }
            return [LoadedPolicyFile(path: folder, layer: layer, state: .refused(describe(e, folder, isFolder: true)))]
        }
        defer { close(dirfd) }
        var info = stat()
        guard fstat(dirfd, &info) == 0 else {
            return [LoadedPolicyFile(path: folder, layer: layer, state: .refused(describe(errno, folder, isFolder: true)))]
        }
        if let problem = ownershipProblem(info, path: folder, layer: layer, uid: uid, what: "folder") {
            return [LoadedPolicyFile(path: folder, layer: layer, state: .refused(problem))]
        }
        guard let names = listPolicyNames(dirfd) else {
            return [LoadedPolicyFile(path: folder, layer: layer, state: .refused("could not list the folder \(folder): "
                                     + String(cString: strerror(errno))))]
        }
        let base = folder.hasSuffix("/") ? folder : folder + "/"
        return names.map { name in
            let path = base + name
            return LoadedPolicyFile(path: path, layer: layer, state: readFile(dirfd, name, path: path, layer: layer, uid: uid))
        }
    }

    /// One file named on the command line (`keygate policy check FILE`): syntax only, links followed,
    /// owner not checked, so a draft can be checked before it is installed.
    static func readForCheck(_ path: String) -> Result<ParsedPolicy, PolicyParseError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            return .failure(PolicyParseError(file: path, line: 0, column: 0, message: describe(errno, path, isFolder: false)))
        }
        defer { close(fd) }
        switch readContents(fd, path: path) {
        case .success(let bytes): return .success(PolicyParser.parse(bytes, file: path))
        case .failure(let why): return .failure(PolicyParseError(file: path, line: 0, column: 0, message: why.message))
        }
    }

    // MARK: - Implementation

    private static func readFile(_ dirfd: Int32, _ name: String, path: String, layer: PolicyLayer, uid: UInt32) -> LoadedPolicyFile.State {
        // O_NONBLOCK: a FIFO planted in the folder must not hang the caller.
        let fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return .refused(describe(errno, path, isFolder: false)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .refused(describe(errno, path, isFolder: false)) }
        if let problem = ownershipProblem(info, path: path, layer: layer, uid: uid, what: "file") { return .refused(problem) }
        let version = FileVersion(info)
        if let parsed = ParsedFileCache.lookup(path, version) { return .parsed(parsed) }
        switch readContents(fd, path: path) {
        case .success(let bytes):
            let parsed = PolicyParser.parse(bytes, file: path)
            ParsedFileCache.store(path, version, parsed)
            return .parsed(parsed)
        case .failure(let why): return .refused(why.message)
        }
    }

    struct Refusal: Error { var message: String }

    private static func readContents(_ fd: Int32, path: String) -> Result<[UInt8], Refusal> {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(Refusal(message: describe(errno, path, isFolder: false))) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            return .failure(Refusal(message: "\(path) is not a regular file: a policy file must be a plain file"))
        }
        let limit = PolicyParser.maximumBytes
        let tooLarge = Refusal(message: "\(path) is larger than \(limit / 1024) KiB, too large to be a policy file: split it or shorten it")
        guard info.st_size <= limit else { return .failure(tooLarge) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(Refusal(message: describe(errno, path, isFolder: false)))
            }
            if n == 0 { break }
            out += chunk[0..<n]
            guard out.count <= limit else { return .failure(tooLarge) }
        }
        return .success(out)
    }

    /// Why a file or folder with this owner and mode must not count, or nil when it may.
    private static func ownershipProblem(_ info: stat, path: String, layer: PolicyLayer, uid: UInt32, what: String) -> String? {
        let mode = info.st_mode & 0o7777
        let octal = "0" + String(mode, radix: 8)
        if layer.isSystem {
            guard info.st_uid == 0 else {
                return "\(path) is owned by uid \(info.st_uid), not root: a system policy \(what) must belong to root "
                    + "(chown root:root \(path))"
            }
        } else if info.st_uid != 0 && info.st_uid != uid {
            return "\(path) is owned by uid \(info.st_uid), neither you (uid \(uid)) nor root: chown it to yourself"
        }
        if mode & 0o022 != 0 {
            let who = mode & 0o002 != 0 ? "others" : "its group"
            return "\(path) is writable by \(who) (mode \(octal)): chmod go-w \(path)"
        }
        return nil
    }

    /// The names of the *.policy entries (not hidden ones), sorted by their bytes (C locale order).
    private static func listPolicyNames(_ dirfd: Int32) -> [String]? {
        let copy = dup(dirfd)
        guard copy >= 0 else { return nil }
        guard let dir = fdopendir(copy) else {
            close(copy)
            return nil
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if name.hasSuffix(".policy"), !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    private static func describe(_ code: Int32, _ path: String, isFolder: Bool) -> String {
        if code == ELOOP {
            return "\(path) is a symbolic link, and Keygate does not follow links to policy \(isFolder ? "folders" : "files"): "
                + "put the real \(isFolder ? "folder" : "file") there"
        }
        if code == ENOTDIR, isFolder {
            // O_DIRECTORY | O_NOFOLLOW on a link to a folder fails with ENOTDIR, not ELOOP.
            var info = stat()
            if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK { return describe(ELOOP, path, isFolder: true) }
            return "\(path) is not a folder"
        }
        let reason = String(cString: strerror(code))
        if code == EACCES || code == EPERM {
            return "could not read \(path): \(reason); make it readable by everyone (mode 0644, folders 0755)"
        }
        return "could not read \(path): \(reason)"
    }
}
