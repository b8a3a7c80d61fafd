// Which ItemStore a keychain uses, and why. An explicit choice wins: KEYGATE_STORE, then
// the user's keygate.conf, then /etc/keygate/keygate.conf (StoreConfig). Otherwise `auto`:
//
// 1. a store recorded in <data dir>/store (the auto choice is sticky: see DECISIONS.md);
// 2. else <data dir>/items.sqlite exists: embedded;
// 3. else a keychain that already exists (made before the embedded store): the Secret Service;
// 4. else no session bus at all (no DBUS_SESSION_BUS_ADDRESS, no $XDG_RUNTIME_DIR/bus):
//    embedded, at once, with no D-Bus call;
// 5. else ask the Secret Service (under the store deadline): it answers (even locked), use
//    it; it does not, embedded.
// An auto choice is recorded (rule 1) whenever the data folder exists or the choice made it,
// so a keyring that is down for a moment later never splits one keychain over two stores.

/// The store in use and the reason, for `keygate status` and `keygate doctor`.
public struct StoreChoice: Sendable, Equatable, Codable {
    public var kind: String
    public var reason: String
}

struct StoreSelection {
    static let variable = "KEYGATE_STORE"
    static let markerName = "store"

    let environment: [String: String]
    let dataDirectory: String
    let home: String
    let deadline: Duration

    /// The chosen store and why. Throws .param for a bad KEYGATE_STORE or config file.
    func resolve() throws -> (store: any ItemStore, choice: StoreChoice) {
        let (kind, reason) = try choose()
        return (Self.store(kind, dataDirectory: dataDirectory, deadline: deadline),
                StoreChoice(kind: kind.rawValue, reason: reason))
    }

    static func store(_ kind: StoreKind, dataDirectory: String, deadline: Duration) -> any ItemStore {
        switch kind {
        case .secretService: return SecretServiceStore(deadline: deadline)
        case .embedded: return EmbeddedStore(directory: dataDirectory, deadline: deadline)
        }
    }

    private func choose() throws -> (StoreKind, String) {
        if let text = environment[Self.variable], !text.isEmpty {
            guard let setting = StoreSetting(text: text) else {
                throw KeychainError.param("\(Self.variable)=\(text) is not one of \(StoreSetting.allowedText): fix or unset it")
            }
            if case .fixed(let kind) = setting { return (kind, "chosen by \(Self.variable)=\(text)") }
            return try auto(source: "\(Self.variable)=auto")
        }
        let userFile = StoreConfig.userPath(environment: environment, home: home)
        for (file, rootOwned) in [(userFile, false), (StoreConfig.systemPath, true)] {
            switch try StoreConfig.read(file, requireRootOwned: rootOwned) {
            case .fixed(let kind)?: return (kind, "chosen by \(file)")
            case .auto?: return try auto(source: file)
            case nil: continue
            }
        }
        return try auto(source: "the default")
    }

    // MARK: auto

    private var markerPath: String { dataDirectory + "/" + Self.markerName }

    private func auto(source: String) throws -> (StoreKind, String) {
        let prefix = "auto (\(source)): "
        if let recorded = Self.recorded(in: dataDirectory) {
            return (recorded, prefix + "this keychain's items are in the \(recorded.rawValue) store, recorded in \(markerPath)")
        }
        if EmbeddedStore.exists(in: dataDirectory) {
            record(.embedded)
            return (.embedded, prefix + "\(dataDirectory)/\(EmbeddedStore.fileName) exists")
        }
        if KeyStore(directory: dataDirectory).isInitialized {
            record(.secretService)
            return (.secretService, prefix + "the keychain was created before the embedded store, so its items are in the Secret Service")
        }
        guard Self.hasSessionBus(environment) else {
            record(.embedded, create: true)
            return (.embedded, prefix + "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS unset, no $XDG_RUNTIME_DIR/bus)")
        }
        do {
            _ = try SecretServiceStore(deadline: deadline).status()
        } catch let error as KeychainError where error.code == .notAvailable {
            record(.embedded, create: true)
            return (.embedded, prefix + "no Secret Service answered (\(error.message))")
        }
        record(.secretService)
        return (.secretService, prefix + "the Secret Service answered")
    }

    /// Records an auto choice. Best effort: a folder that cannot be written is reported by the
    /// store itself on its first write. `create`: make the data folder if needed.
    private func record(_ kind: StoreKind, create: Bool = false) {
        if !create, !AtomicFile.exists(dataDirectory) { return }
        do {
            if create { try PrivateDirectory.make(dataDirectory) }
            try Self.record(kind, in: dataDirectory)
        } catch {}
    }

    /// The store recorded for the keychain in `directory`, if any.
    static func recorded(in directory: String) -> StoreKind? {
        guard let bytes = try? AtomicFile.read(directory + "/" + markerName, maxBytes: 64) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == " " }).first
        return text.flatMap { StoreKind(rawValue: String($0)) }
    }

    /// Records `kind` as the keychain's store (auto follows it from now on); `keygate migrate` calls it too.
    static func record(_ kind: StoreKind, in directory: String) throws {
        try AtomicFile.write(Array((kind.rawValue + "\n").utf8), to: directory + "/" + markerName, mode: 0o600)
    }

    /// A session bus is configured: DBUS_SESSION_BUS_ADDRESS, or systemd's $XDG_RUNTIME_DIR/bus.
    /// Without one, libsecret would only fail (or try to autolaunch), so auto never asks it.
    static func hasSessionBus(_ env: [String: String]) -> Bool {
        if let address = env["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return true }
        guard let runtime = env["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return false }
        if case .found(let info) = FileProbe.inspect(runtime + "/bus"), info.kind == .socket { return true }
        return false
    }
}
