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
// An auto choice is recorded (rule 1) by the first write that needs a store (creating the
// keychain, adding an item: StoreRecord.commit), so a keyring that is down for a moment later
// never splits one keychain over two stores. Read-only commands (doctor, status, list,
// exists, get) decide the same way but never write the choice down.
import KeygateCore

/// The store in use and the reason, for `keygate status` and `keygate doctor`.
public struct StoreChoice: Sendable, Equatable, Codable {
    public var kind: String
    public var reason: String
}

package struct StoreSelection {
    static let variable = "KEYGATE_STORE"
    static let markerName = "store"

    let environment: [String: String]
    let dataDirectory: String
    let home: String
    let deadline: Duration

    package init(environment: [String: String], dataDirectory: String, home: String, deadline: Duration) {
        self.environment = environment
        self.dataDirectory = dataDirectory
        self.home = home
        self.deadline = deadline
    }

    /// The chosen store and why, and for an auto choice not yet recorded, the record the first
    /// write commits. Throws .param for a bad KEYGATE_STORE or config file.
    package func resolve() throws -> (store: any ItemStore, choice: StoreChoice, record: StoreRecord?) {
        _ = try UnlockPromptSetting.current(environment)  // a bad KEYGATE_UNLOCK_PROMPT is reported here
        let (kind, reason, record) = try choose()
        return (Self.store(kind, dataDirectory: dataDirectory, deadline: deadline),
                StoreChoice(kind: kind.rawValue, reason: reason), record)
    }

    package static func store(_ kind: StoreKind, dataDirectory: String, deadline: Duration) -> any ItemStore {
        switch kind {
        case .secretService: return SecretServiceStore(deadline: deadline)
        case .embedded: return EmbeddedStore(directory: dataDirectory, deadline: deadline)
        }
    }

    private func choose() throws -> (StoreKind, String, StoreRecord?) {
        if let text = environment[Self.variable], !text.isEmpty {
            guard let setting = StoreSetting(text: text) else {
                throw KeychainError.param("\(Self.variable)=\(text) is not one of \(StoreSetting.allowedText): fix or unset it")
            }
            if case .fixed(let kind) = setting { return (kind, "chosen by \(Self.variable)=\(text)", nil) }
            return try auto(source: "\(Self.variable)=auto")
        }
        let userFile = StoreConfig.userPath(environment: environment, home: home)
        for (file, rootOwned) in [(userFile, false), (StoreConfig.systemPath, true)] {
            switch try StoreConfig.read(file, requireRootOwned: rootOwned) {
            case .fixed(let kind)?: return (kind, "chosen by \(file)", nil)
            case .auto?: return try auto(source: file)
            case nil: continue
            }
        }
        return try auto(source: "the default")
    }

    // MARK: auto

    private var markerPath: String { dataDirectory + "/" + Self.markerName }

    private func auto(source: String) throws -> (StoreKind, String, StoreRecord?) {
        let prefix = "auto (\(source)): "
        if let recorded = Self.recorded(in: dataDirectory) {
            return (recorded, prefix + "this keychain's items are in the \(recorded.rawValue) store, recorded in \(markerPath)", nil)
        }
        let (kind, reason): (StoreKind, String)
        if EmbeddedStore.exists(in: dataDirectory) {
            (kind, reason) = (.embedded, "\(dataDirectory)/\(EmbeddedStore.fileName) exists")
        } else if KeyStore(directory: dataDirectory).isInitialized {
            (kind, reason) = (.secretService, "the keychain was created before the embedded store, so its items are in the Secret Service")
        } else if !Self.hasSessionBus(environment) {
            (kind, reason) = (.embedded, "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS unset, no $XDG_RUNTIME_DIR/bus)")
        } else {
            do {
                _ = try SecretServiceStore(deadline: deadline).status()
                (kind, reason) = (.secretService, "the Secret Service answered")
            } catch let error as KeychainError where error.code == .notAvailable {
                (kind, reason) = (.embedded, "no Secret Service answered (\(error.message))")
            }
        }
        return (kind, prefix + reason, StoreRecord(kind: kind, dataDirectory: dataDirectory))
    }

    /// The store recorded for the keychain in `directory`, if any.
    package static func recorded(in directory: String) -> StoreKind? {
        guard let bytes = try? AtomicFile.read(directory + "/" + markerName, maxBytes: 64) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == " " }).first
        return text.flatMap { StoreKind(rawValue: String($0)) }
    }

    /// Records `kind` as the keychain's store (auto follows it from now on); `keygate migrate` calls it too.
    package static func record(_ kind: StoreKind, in directory: String) throws {
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

/// An auto store choice to write down, which the first write that needs the store commits
/// (KeychainOperations: initialize, add).
package struct StoreRecord: Sendable {
    let kind: StoreKind
    let dataDirectory: String

    /// Best effort: a folder that cannot be written is reported by the write itself.
    package func commit() {
        do {
            try PrivateDirectory.make(dataDirectory)
            try StoreSelection.record(kind, in: dataDirectory)
        } catch {}
    }
}
