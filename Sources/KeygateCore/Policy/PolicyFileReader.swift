// Reads a folder of *.policy files the way sudo and pam-u2f read their configuration:
// the folder and each file are opened without following a symbolic link (the file
// relative to the folder's descriptor, so the folder cannot be swapped in between),
// and a system file counts only when it is a regular file owned by root and not
// writable by group or others, at most 64 KiB. A user's file may be owned by that
// user. Opening, the owner rule and reading are ConfigFile's (shared with keygate.conf);
// this file says what a refusal means for policy. Parsing is delegated to PolicyParser.

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
        let dirfd = SafeFile.openFolder(folder, links: layer.isSystem ? .refuse : .follow)
        guard dirfd >= 0 else {
            let e = SystemErrno.last
            if e == .noEntry { return [LoadedPolicyFile(path: folder, layer: layer, state: .absent)] }
            return [LoadedPolicyFile(path: folder, layer: layer, state: .refused(describe(e.code, folder, isFolder: true)))]
        }
        defer { Descriptor.close(dirfd) }
        let info: FileStatus
        switch FileStatus.of(descriptor: dirfd) {
        case .success(let status): info = status
        case .failure(let e):
            return [LoadedPolicyFile(path: folder, layer: layer, state: .refused(describe(e.code, folder, isFolder: true)))]
        }
        if let problem = ownershipProblem(info, path: folder, layer: layer, uid: uid, what: "folder") {
            return [LoadedPolicyFile(path: folder, layer: layer, state: .refused(problem))]
        }
        let names: [String]
        switch listPolicyNames(dirfd) {
        case .listed(let listed): names = listed
        case .tooMany:
            return [LoadedPolicyFile(path: folder, layer: layer, state: .refused("""
                \(folder) holds more than \(maxFiles) policy files or \(maxEntries) entries, more than Keygate reads for one \
                folder: merge them into fewer files
                """))]
        case .failed(let code):
            return [LoadedPolicyFile(path: folder, layer: layer, state: .refused("could not list the folder \(folder): "
                                     + SystemErrno(code: code).text))]
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
        let file: OpenFile
        switch ConfigFile.open(path, links: .follow) {
        case .success(let opened): file = opened
        case .failure(let e):
            return .failure(PolicyParseError(file: path, line: 0, column: 0, message: describe(e.code, path, isFolder: false)))
        }
        defer { file.close() }
        switch readContents(file, path: path) {
        case .success(let bytes): return .success(PolicyParser.parse(bytes, file: path))
        case .failure(let why): return .failure(PolicyParseError(file: path, line: 0, column: 0, message: why.message))
        }
    }

    // MARK: - Implementation

    private static func readFile(_ dirfd: Int32, _ name: String, path: String, layer: PolicyLayer, uid: UInt32) -> LoadedPolicyFile.State {
        // Never through a link, and never blocking on a FIFO planted in the folder.
        let file: OpenFile
        switch ConfigFile.open(name, links: .refuse, in: dirfd) {
        case .success(let opened): file = opened
        case .failure(let e): return .refused(describe(e.code, path, isFolder: false))
        }
        defer { file.close() }
        if let problem = ownershipProblem(file.status, path: path, layer: layer, uid: uid, what: "file") { return .refused(problem) }
        let version = FileVersion(file.info)
        if let parsed = ParsedFileCache.lookup(path, version) { return .parsed(parsed) }
        switch readContents(file, path: path) {
        case .success(let bytes):
            let parsed = PolicyParser.parse(bytes, file: path)
            ParsedFileCache.store(path, version, parsed)
            return .parsed(parsed)
        case .failure(let why): return .refused(why.message)
        }
    }

    struct Refusal: Error { var message: String }

    /// The file's bytes (the kind and size checked on the fstat made when it was opened).
    private static func readContents(_ file: OpenFile, path: String) -> Result<[UInt8], Refusal> {
        let limit = PolicyParser.maximumBytes
        switch ConfigFile.contents(of: file, limit: limit, chunk: 8192) {
        case .success(let bytes): return .success(bytes)
        case .failure(.notRegular):
            return .failure(Refusal(message: "\(path) is not a regular file: a policy file must be a plain file"))
        case .failure(.tooLarge):
            return .failure(Refusal(message: "\(path) is larger than \(limit / 1024) KiB, too large to be a policy file: split it or shorten it"))
        case .failure(.failed(let e)):
            return .failure(Refusal(message: describe(e.code, path, isFolder: false)))
        }
    }

    /// Why a file or folder with this owner and mode must not count, or nil when it may.
    private static func ownershipProblem(_ info: FileStatus, path: String, layer: PolicyLayer, uid: UInt32, what: String) -> String? {
        switch ConfigFile.problem(info, owner: layer.isSystem ? .root : .rootOr(uid: uid)) {
        case nil: return nil
        case .owner(let owner) where layer.isSystem:
            return "\(path) is owned by uid \(owner), not root: a system policy \(what) must belong to root "
                + "(chown root:root \(path))"
        case .owner(let owner):
            return "\(path) is owned by uid \(owner), neither you (uid \(uid)) nor root: chown it to yourself"
        case .writable(let byOthers):
            let octal = "0" + String(info.mode, radix: 8)
            return "\(path) is writable by \(byOthers ? "others" : "its group") (mode \(octal)): chmod go-w \(path)"
        }
    }

    /// The names of the *.policy entries (not hidden ones), sorted by their bytes (C locale order).
    /// How much of one folder is read: a user who fills their folder (50,000 files) costs the
    /// gatekeeper's daemon, which reads it for every request of theirs, one bounded listing, and
    /// its cache of parsed files (ParsedFileCache) at most this many entries.
    static let maxFiles = 256
    static let maxEntries = 4096

    private enum Listing {
        case listed([String])
        case tooMany
        case failed(Int32)
    }

    private static func listPolicyNames(_ dirfd: Int32) -> Listing {
        let all: [String]
        switch DirectoryNames.read(folder: dirfd, maxEntries: maxEntries) {
        case .success(let listed?): all = listed
        case .success(nil): return .tooMany
        case .failure(let e): return .failed(e.code)
        }
        let names = all.filter { $0.hasSuffix(".policy") && !$0.hasPrefix(".") }
        if names.count > maxFiles { return .tooMany }
        return .listed(names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
    }

    private static func describe(_ code: Int32, _ path: String, isFolder: Bool) -> String {
        if code == SystemErrno.symbolicLink.code {
            return "\(path) is a symbolic link, and Keygate does not follow links to policy \(isFolder ? "folders" : "files"): "
                + "put the real \(isFolder ? "folder" : "file") there"
        }
        if code == SystemErrno.notDirectory.code, isFolder {
            // O_DIRECTORY | O_NOFOLLOW on a link to a folder fails with ENOTDIR, not ELOOP.
            if case .success(let info) = FileStatus.of(path, links: .refuse), info.isSymbolicLink {
                return describe(SystemErrno.symbolicLink.code, path, isFolder: true)
            }
            return "\(path) is not a folder"
        }
        let reason = SystemErrno(code: code).text
        if code == SystemErrno.accessDenied.code || code == SystemErrno.notPermitted.code {
            return "could not read \(path): \(reason); make it readable by everyone (mode 0644, folders 0755)"
        }
        return "could not read \(path): \(reason)"
    }
}
