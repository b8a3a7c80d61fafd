// keygate.conf: the one setting that is Keygate's own configuration rather than policy,
// which item store to use. Two files, the user's ($XDG_CONFIG_HOME/keygate/keygate.conf,
// default ~/.config/keygate/keygate.conf) over the system's (/etc/keygate/keygate.conf,
// which counts only when owned by root and not writable by group or others).
//
// The format is tiny and strict: blank lines, `#` comments, and `store = VALUE` with VALUE
// one of secret-service, embedded, auto. Anything else is an error naming file:line.
// Files are read through AtomicFile (no symbolic links, no FIFOs, a size limit).
internal import Glibc

/// Which backend holds the items.
public enum StoreKind: String, Sendable, CaseIterable {
    case secretService = "secret-service"
    case embedded
}

/// The store setting: a backend, or `auto` (the Secret Service when one answers, else embedded).
enum StoreSetting: Equatable, Sendable {
    case fixed(StoreKind)
    case auto

    init?(text: String) {
        if text == "auto" { self = .auto; return }
        guard let kind = StoreKind(rawValue: text) else { return nil }
        self = .fixed(kind)
    }

    static let allowedText = "secret-service, embedded or auto"
}

enum StoreConfig {
    static let systemPath = "/etc/keygate/keygate.conf"
    private static let maxBytes = 64 * 1024

    static func userPath(environment env: [String: String], home: String) -> String {
        if let xdg = env["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/keygate/keygate.conf" }
        let base = env["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home
        return base + "/.config/keygate/keygate.conf"
    }

    /// The store setting from `path`, nil when the file does not exist or sets nothing.
    /// `requireRootOwned`: refuse a file that root does not own or others can write.
    static func read(_ path: String, requireRootOwned: Bool) throws -> StoreSetting? {
        if requireRootOwned {
            var info = stat()
            if lstat(path, &info) != 0 { return nil }
            guard info.st_uid == 0, info.st_mode & 0o022 == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw KeychainError.param("\(path) is refused: it must be a regular file owned by root and not writable "
                                          + "by group or others (chown root: \(path); chmod 644 \(path))")
            }
        }
        guard let bytes = try AtomicFile.read(path, maxBytes: maxBytes) else { return nil }
        return try parse(String(decoding: bytes, as: UTF8.self), file: path)
    }

    /// Parses the text of a keygate.conf; the last `store` line wins.
    static func parse(_ text: String, file: String) throws -> StoreSetting? {
        var setting: StoreSetting?
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingSpaces
            if line.isEmpty || line.hasPrefix("#") { continue }
            let place = "\(file):\(index + 1)"
            guard let eq = line.firstIndex(of: "=") else {
                throw KeychainError.param("\(place): expected `store = \(StoreSetting.allowedText)`, found \"\(line)\"")
            }
            let key = line[..<eq].trimmingSpaces
            let value = line[line.index(after: eq)...].trimmingSpaces
            guard key == "store" else {
                throw KeychainError.param("\(place): unknown setting \"\(key)\"; the only setting is `store`")
            }
            guard let parsed = StoreSetting(text: value) else {
                throw KeychainError.param("\(place): store = \"\(value)\" is not one of \(StoreSetting.allowedText)")
            }
            setting = parsed
        }
        return setting
    }
}

private extension Substring {
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}

private extension String {
    var trimmingSpaces: String { self[...].trimmingSpaces }
}
