// keygate.conf, the file format: the one setting that is Keygate's own configuration rather
// than policy, which item store to use (StoreSelection resolves it). Two files, the user's ($XDG_CONFIG_HOME/keygate/keygate.conf,
// default ~/.config/keygate/keygate.conf) over the system's (/etc/keygate/keygate.conf,
// which counts only when owned by root and not writable by group or others).
//
// The format is tiny and strict, in the line syntax policy files share (ConfigSyntax): blank
// lines, `#` comments, and `store = VALUE` with VALUE one of secret-service, embedded, auto.
// Anything else is an error naming file:line.
// Files are read by ConfigFile, the reader policy files use: without blocking on a FIFO
// and with a size limit; the system file never through a symbolic link, and under the
// policy files' owner rule.
import KeygateCore

enum StoreConfig {
    static let systemPath = "/etc/keygate/keygate.conf"
    private static let maxBytes = 64 * 1024

    static func userPath(environment env: KeygateEnvironment, home: String) -> String {
        if let xdg = env.configHome, xdg.hasPrefix("/") { return xdg + "/keygate/keygate.conf" }
        let base = env.home.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home
        return base + "/.config/keygate/keygate.conf"
    }

    /// The store setting from `path`, nil when the file does not exist or sets nothing.
    /// `requireRootOwned` (the system file): never through a link, and refused unless root
    /// owns it and group and others cannot write it, checked on the opened file. The user's
    /// own file may be a link (dotfile managers make them).
    static func read(_ path: String, requireRootOwned: Bool) throws -> StoreSelection.Setting? {
        let file: OpenFile
        switch ConfigFile.open(path, links: requireRootOwned ? .refuse : .follow) {
        case .success(let opened): file = opened
        case .failure(let e) where e == .noEntry || e == .notDirectory: return nil
        case .failure(.symbolicLink): throw refused(path)
        case .failure(let e):
            throw KeychainError.param("could not read \(path): \(e.text); fix its permissions or remove it")
        }
        defer { file.close() }
        let notRegular = KeychainError.param("\(path) is not a regular file: remove it, or make it one with a `store = ...` line")
        guard file.isRegular else { throw notRegular }
        if requireRootOwned, ConfigFile.problem(file.status, owner: .root) != nil { throw refused(path) }
        switch ConfigFile.contents(of: file, limit: maxBytes) {
        case .success(let bytes): return try parse(String(decoding: bytes, as: UTF8.self), file: path)
        case .failure(.notRegular): throw notRegular
        case .failure(.tooLarge):
            throw KeychainError.param("\(path) is larger than \(maxBytes) bytes: it holds one `store = ...` line; fix it")
        case .failure(.failed(let e)): throw KeychainError.param("could not read \(path): \(e.text); check the disk")
        }
    }

    private static func refused(_ path: String) -> KeychainError {
        .param("\(path) is refused: it must be a regular file (not a link) owned by root and not writable by group "
               + "or others (chown root: \(path); chmod 644 \(path))")
    }

    /// Parses the text of a keygate.conf; the last `store` line wins. The lines are the syntax
    /// policy files have too (ConfigSyntax); keygate.conf has no sections and one key.
    static func parse(_ text: String, file: String) throws -> StoreSelection.Setting? {
        var setting: StoreSelection.Setting?
        var failure: KeychainError?
        ConfigSyntax.forEachLine(Array(text.utf8)) { line, number in
            let place = "\(file):\(number)"
            switch ConfigSyntax.classify(line, fileKind: "keygate.conf") {
            case .nothing:
                return true
            case .problem(let column, let message):
                failure = .param("\(place):\(column): \(message); expected `store = \(StoreSelection.Setting.allowedText)`")
            case .header:
                failure = .param("\(place): keygate.conf has no [sections]; its one line is `store = \(StoreSelection.Setting.allowedText)`")
            case .setting(let key, _, let value, _):
                guard key == "store" else {
                    failure = .param("\(place): unknown setting \"\(key)\"; the only setting is `store`")
                    return false
                }
                guard let parsed = StoreSelection.Setting(text: value) else {
                    failure = .param("\(place): store = \"\(value)\" is not one of \(StoreSelection.Setting.allowedText)")
                    return false
                }
                setting = parsed
                return true
            }
            return false
        }
        if let failure { throw failure }
        return setting
    }
}
