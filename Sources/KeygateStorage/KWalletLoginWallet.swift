// KWallet at a user's first login: pam_kwallet5 makes the wallet "kdewallet" and opens it,
// but kwalletd5 lists a wallet as a Secret Service collection only from its next start, so
// Secret Service programs see no collection and no "default" alias although the wallet is
// open (measured on kwalletd5 5.103: docs/DECISIONS.md). Creating one through CreateCollection
// is no way out: kwalletd5 answers it with its new-wallet password window, a second wallet.
// This asks kwalletd5's own interface (org.kde.kwalletd5) whether the login wallet exists
// and is open, so that the message says what to do. Never changes anything.
//
// At every later login, kwalletd5 (started by pam_kwallet5) lists the wallet as a collection
// built before pam_kwallet5's key opened it: the collection reads Locked=true although the
// wallet is open, until some client calls Unlock and completes its prompt, which kwalletd5
// answers with no window (the wallet is open, and it asks each program only under kwalletrc's
// "Prompt on Open"). `kWalletOpensWithoutAWindow` tells that case apart, so that Keygate
// completes that prompt even where no window may be shown (list, exists, --no-unlock-prompt).
import KeygateCore

extension SecretServiceConnection {
    /// The wallet pam_kwallet5 opens at login.
    static let kWalletLoginWallet = "kdewallet"

    /// What kwalletd5 says of the login wallet: nil when it cannot tell (no kwalletd5 on this bus).
    enum LoginWallet: Equatable {
        case missing
        case closed
        case open
    }

    func kWalletLoginWallet(_ deadline: ServiceDeadline) -> LoginWallet? {
        kWallet(Self.kWalletLoginWallet, deadline)
    }

    /// What kwalletd5 says of the wallet `name`: nil when it cannot tell.
    private func kWallet(_ name: String, _ deadline: ServiceDeadline) -> LoginWallet? {
        guard let bus = try? connection(deadline) else { return nil }
        let calls = [
            ServiceMethodCall(destination: "org.kde.kwalletd5", path: "/modules/kwalletd5", interface: "org.kde.KWallet",
                              method: "wallets", arguments: nil, replyType: "(as)", action: "list KWallet's wallets"),
            ServiceMethodCall(destination: "org.kde.kwalletd5", path: "/modules/kwalletd5", interface: "org.kde.KWallet",
                              method: "isOpen", arguments: Variant.tuple([Variant.string(name)]),
                              replyType: "(b)", action: "ask whether the KWallet wallet is open"),
        ]
        let replies = exchange(calls, deadline, on: bus)
        guard replies.count == 2, case .success(let wallets) = replies[0] else { return nil }
        guard wallets.child(0)?.strings.contains(name) == true else { return .missing }
        guard case .success(let open) = replies[1] else { return nil }
        return open.child(0)?.boolean == true ? .open : .closed
    }

    /// Whether kwalletd5 completes an Unlock prompt for `collection` with no window: the
    /// provider is KWallet, the collection's wallet (its Label is the wallet's name) is open, and
    /// kwalletrc does not ask each program first ("Prompt on Open").
    func kWalletOpensWithoutAWindow(_ collection: String, _ deadline: ServiceDeadline) -> Bool {
        guard provider(deadline) == .kWallet, !Self.kWalletPromptsOnOpen(environment) else { return false }
        let label = try? call(ServiceMethodCall(
            path: collection, interface: Self.propertiesInterface, method: "Get",
            arguments: Variant.tuple([Variant.string(Self.collectionInterface), Variant.string("Label")]),
            replyType: "(v)", action: "read the collection's label"), deadline)
        guard let wallet = label?.child(0)?.unboxed?.string, !wallet.isEmpty else { return false }
        return kWallet(wallet, deadline) == .open
    }

    /// kwalletrc's [Wallet] "Prompt on Open" (off unless set), read as KConfig reads it: the
    /// user's file ($XDG_CONFIG_HOME, else ~/.config, in the environment passed down), else the
    /// system's (/etc/xdg).
    static func kWalletPromptsOnOpen(_ environment: KeygateEnvironment) -> Bool {
        var files: [String] = []
        if let config = environment.configHome {
            files.append(config + "/kwalletrc")
        } else if let home = environment.home {
            files.append(home + "/.config/kwalletrc")
        }
        files.append("/etc/xdg/kwalletrc")
        for path in files {
            guard case .success(let file) = ConfigFile.open(path, links: .follow) else { continue }
            defer { file.close() }
            guard file.isRegular, case .success(let bytes) = ConfigFile.contents(of: file, limit: 1 << 20) else { continue }
            if let value = kWalletSetting("Prompt on Open", inGroup: "Wallet", of: String(decoding: bytes, as: UTF8.self)) {
                return value == "true"
            }
        }
        return false
    }

    /// The value of `key` in `[group]` of a KConfig file's text (lowercased), nil when absent.
    /// Lines as every configuration file's (ConfigSyntax.forEachLine: LF, a trailing CR dropped);
    /// KConfig keys may hold spaces ("Prompt on Open"), so the key is what comes before `=`.
    static func kWalletSetting(_ key: String, inGroup group: String, of text: String) -> String? {
        var inGroup = false
        var found: String?
        ConfigSyntax.forEachLine(Array(text.utf8)) { bytes, _ in
            let line = trimmingBlanks(bytes[...])
            if line.first == UInt8(ascii: "[") {
                inGroup = line.elementsEqual("[\(group)]".utf8)
                return true
            }
            guard inGroup, let equals = line.firstIndex(of: UInt8(ascii: "=")),
                  trimmingBlanks(line[..<equals]).elementsEqual(key.utf8) else { return true }
            found = String(decoding: trimmingBlanks(line[(equals + 1)...]), as: UTF8.self).lowercased()
            return false
        }
        return found
    }

    /// Without blanks (space, tab) at either end.
    private static func trimmingBlanks(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var out = bytes
        while let first = out.first, ConfigSyntax.isBlank(first) { out = out.dropFirst() }
        while let last = out.last, ConfigSyntax.isBlank(last) { out = out.dropLast() }
        return out
    }
}
