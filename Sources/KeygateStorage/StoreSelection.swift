// Which ItemStore a keychain uses, and why. An explicit choice wins: KEYGATE_STORE, then
// the user's keygate.conf, then /etc/keygate/keygate.conf (StoreConfig). Otherwise `auto`:
//
// 1. a store recorded in <data dir>/store (the auto choice is sticky: see DECISIONS.md);
// 2. else <data dir>/items.sqlite exists: embedded;
// 3. else a keychain that already exists (made before the embedded store): the Secret Service;
// 4. else no session bus at all (no DBUS_SESSION_BUS_ADDRESS, no $XDG_RUNTIME_DIR/bus):
//    embedded, at once, with no D-Bus call;
// 5. else ask the Secret Service (under the store deadline): it answers (even locked, or
//    running with no default collection: its advice is the reason, and the first write fails
//    with it), use it; it does not, embedded. When the one that answers is Keygate's own
//    keygate-secret-service, embedded: that daemon serves this keychain's embedded store, so the
//    CLI and the library read the file directly (the daemon also creates it at start: rule 2).
// An auto choice is recorded (rule 1) by the first write that needs a store (creating the
// keychain, adding an item: StoreSelection.commitRecord), so a keyring that is down for a moment later
// never splits one keychain over two stores. Read-only commands (doctor, status, list,
// exists, get) decide the same way but never write the choice down.
import KeygateCore

/// The store setting and what it resolves to: the backend in use and why (for `keygate status` and
/// `keygate doctor`), and, for an auto choice not yet written down, the record the first write commits.
public struct StoreSelection: Sendable, Equatable {
    /// A setting's value (KEYGATE_STORE, a keygate.conf line): KeygateCore's StoreSetting.
    typealias Setting = StoreSetting

    static let variable = "KEYGATE_STORE"
    static let markerName = "store"

    /// The backend in use.
    public let kind: StoreKind
    /// Why: the setting that chose it, or the auto rule that did.
    public let reason: String
    /// The keychain's data folder, where the store lives (embedded) and the choice is recorded.
    let dataDirectory: String
    /// An auto choice not yet recorded: the first write that needs the store records it (`commitRecord`).
    let needsRecord: Bool

    /// The chosen store and why. Throws .param for a bad KEYGATE_STORE or config file.
    package static func resolve(environment: KeygateEnvironment, dataDirectory: String, home: String,
                        deadline: Duration) throws -> StoreSelection {
        _ = try environment.unlockPromptSetting()  // a bad KEYGATE_UNLOCK_PROMPT is reported here
        return try choose(environment, dataDirectory: dataDirectory, home: home, deadline: deadline)
    }

    /// The store to talk to, with `deadline` on each call; a locked Secret Service collection
    /// shows its unlock window only as `unlockPrompt` allows.
    /// `environment`: the edge's, passed down to the Secret Service's connection.
    package func store(deadline: Duration, unlockPrompt: UnlockPromptSetting, environment: KeygateEnvironment) -> any ItemStore {
        Self.store(kind, dataDirectory: dataDirectory, deadline: deadline, unlockPrompt: unlockPrompt, environment: environment)
    }

    package static func store(_ kind: StoreKind, dataDirectory: String, deadline: Duration,
                              unlockPrompt: UnlockPromptSetting, environment: KeygateEnvironment) -> any ItemStore {
        switch kind {
        case .secretService: return SecretServiceStore(deadline: deadline, unlockPrompt: unlockPrompt, environment: environment)
        case .embedded: return EmbeddedStore(directory: dataDirectory, deadline: deadline)
        }
    }

    /// Records an auto choice not yet recorded (KeychainOperations: initialize, add). Best effort: a
    /// folder that cannot be written is reported by the write itself.
    package func commitRecord() {
        guard needsRecord else { return }
        do {
            try PrivateDirectory.make(dataDirectory)
            try Self.record(kind, in: dataDirectory)
        } catch {}
    }

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
    /// Without one, connecting could only fail, so auto never asks it.
    static func hasSessionBus(_ env: KeygateEnvironment) -> Bool {
        if env.sessionBusAddress != nil { return true }
        guard let runtime = env.runtimeDirectory, runtime.hasPrefix("/") else { return false }
        if case .found(let info) = FileProbe.inspect(runtime + "/bus"), info.kind == .socket { return true }
        return false
    }
}

// MARK: the rules above

extension StoreSelection {
    private static func choose(_ environment: KeygateEnvironment, dataDirectory: String, home: String,
                               deadline: Duration) throws -> StoreSelection {
        func chosen(_ kind: StoreKind, _ reason: String) -> StoreSelection {
            StoreSelection(kind: kind, reason: reason, dataDirectory: dataDirectory, needsRecord: false)
        }
        func auto(source: String) throws -> StoreSelection {
            try Self.auto(source: source, environment, dataDirectory: dataDirectory, deadline: deadline)
        }
        if let setting = try environment.storeSetting() {
            if case .fixed(let kind) = setting { return chosen(kind, "chosen by \(variable)=\(setting.text)") }
            return try auto(source: "\(variable)=auto")
        }
        let userFile = StoreConfig.userPath(environment: environment, home: home)
        for (file, rootOwned) in [(userFile, false), (StoreConfig.systemPath, true)] {
            switch try StoreConfig.read(file, requireRootOwned: rootOwned) {
            case .fixed(let kind)?: return chosen(kind, "chosen by \(file)")
            case .auto?: return try auto(source: file)
            case nil: continue
            }
        }
        return try auto(source: "the default")
    }

    private static func auto(source: String, _ environment: KeygateEnvironment, dataDirectory: String,
                             deadline: Duration) throws -> StoreSelection {
        let prefix = "auto (\(source)): "
        if let recorded = recorded(in: dataDirectory) {
            let markerPath = dataDirectory + "/" + markerName
            return StoreSelection(kind: recorded,
                                  reason: prefix + "this keychain's items are in the \(recorded.rawValue) store, recorded in \(markerPath)",
                                  dataDirectory: dataDirectory, needsRecord: false)
        }
        let (kind, reason): (StoreKind, String)
        if EmbeddedStore.exists(in: dataDirectory) {
            (kind, reason) = (.embedded, "\(dataDirectory)/\(EmbeddedStore.fileName) exists")
        } else if KeyStore(directory: dataDirectory).isInitialized {
            (kind, reason) = (.secretService, "the keychain was created before the embedded store, so its items are in the Secret Service")
        } else if !hasSessionBus(environment) {
            (kind, reason) = (.embedded, "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS unset, no $XDG_RUNTIME_DIR/bus)")
        } else {
            do {
                let service = SecretServiceStore(deadline: deadline, unlockPrompt: .never, environment: environment)
                _ = try service.status()
                if service.provider() == .keygate {
                    // Keygate's own daemon serves this very keychain's embedded store: read it directly,
                    // with no second sealing and no round trip (docs/DECISIONS.md, "The second door").
                    (kind, reason) = (.embedded, "Keygate's own Secret Service (keygate-secret-service) answers: its items "
                                      + "are this keychain's embedded store, read directly")
                } else {
                    (kind, reason) = (.secretService, "the Secret Service answered")
                }
            } catch let error as KeychainError where error.reason == .noDefaultCollection {
                // A provider runs: its items belong there, never silently in the embedded store.
                (kind, reason) = (.secretService, "a Secret Service runs, but \(error.message)")
            } catch let error as KeychainError where error.code == .notAvailable {
                // A Secret Service with no default collection answered, but cannot hold items.
                let why = error.reason == .noDefaultCollection ? "the Secret Service has no default collection to keep items in"
                    : "no Secret Service answered"
                (kind, reason) = (.embedded, "\(why) (\(error.message))")
            }
        }
        return StoreSelection(kind: kind, reason: prefix + reason, dataDirectory: dataDirectory, needsRecord: true)
    }
}

