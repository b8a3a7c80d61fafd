// Doctor check: does the Secret Service really take Keygate's writes? Where the default
// collection reads as unlocked, this creates a throwaway item in it, reads it back and deletes
// it (completing any prompt the provider answers with, as every write does: KeePassXC prompts
// for each CreateItem and Delete), and names the provider and its version. The read goes
// through a new connection, as a later command's would: a provider that locks items for each
// program (KeePassXC's default "Confirm when passwords are retrieved by clients") lets the
// program that wrote an item read it, and no other without its Access Request window. A provider whose
// prompt never completes (a confirmation window nobody answers, or no window to show it) fails
// here with advice, instead of failing the user's first `keygate add`. Never prompts for an
// unlock, never reads a real item; the throwaway blob is random bytes, not a secret.

enum SecretServiceRoundTripCheck {
    static let name = "secret-service"
    /// The throwaway item's service attribute; its account is random per run.
    static let service = "keygate-doctor"

    /// `base`: the secret-service check from the status snapshot (OK: unlocked).
    static func run(base: DiagnosticResult, deadline: Duration = .seconds(5)) -> DiagnosticResult {
        let store = SecretServiceStore(deadline: deadline, connection: .shared, unlockPrompt: .never, windowLimit: deadline)
        let provider = store.provider()
        let who = provider.name + (version(of: provider).map { " " + $0 } ?? "")
        let random = Sodium.randomBytes(8)
        let account = "round-trip-" + random.map { String(Int($0) | 0x100, radix: 16).dropFirst() }.joined()
        let identity = ItemIdentity.generic(service: service, account: account)
        let attributes = ItemAttributes(identity: identity, label: "Keygate doctor's throwaway item (safe to delete)")
        var step = "create"
        do {
            try store.create(attributes, blob: random, replace: false)
            step = "read back"
            // A later command's read: a connection of its own, never a window.
            let reader = SecretServiceStore(deadline: deadline, connection: SecretServiceConnection(environment: SecretServiceConnection.shared.environment),
                                            unlockPrompt: .never,
                                            windowLimit: deadline)
            let found: [StoredItem]
            do {
                found = try reader.search(ItemQuery(exactly: identity), loadBlobs: true)
            } catch let error as KeychainError where error.reason == .lockedItem {
                step = "delete"
                try store.delete(ItemQuery(exactly: identity))
                return DiagnosticResult(name, .warn, """
                    \(who): writes work, but \(provider.name) locks each item for each program: every command that reads a \
                    secret waits for you to allow it in \(provider.name)'s window (a script with no one to answer fails)
                    """, advice: provider.itemAccessAdvice)
            }
            guard found.first?.blob == random else {
                _ = try? store.delete(ItemQuery(exactly: identity))
                return DiagnosticResult(name, .fail, "\(who): a throwaway item read back through a new connection different from what was written",
                                        advice: "the Secret Service corrupts items: update or replace \(provider.name)")
            }
            step = "delete"
            try store.delete(ItemQuery(exactly: identity))
            guard try store.search(ItemQuery(exactly: identity), loadBlobs: false).isEmpty else {
                return DiagnosticResult(name, .fail, "\(who): a deleted throwaway item is still there",
                                        advice: "delete \"\(service)\" items with secret-tool or \(provider.name), and update it")
            }
        } catch let error as KeychainError {
            let leftover = step == "delete" ? """
                ; the throwaway item (service \(service), account \(account)) is left: delete it in \(provider.name)
                """ : ""
            return DiagnosticResult(name, .fail, "\(who): could not \(step) a throwaway item: \(error.message)\(leftover)",
                                    advice: advice(provider))
        } catch {
            return DiagnosticResult(name, .fail, "\(who): could not \(step) a throwaway item: \(error)", advice: advice(provider))
        }
        return DiagnosticResult(name, .ok, base.detail + "; provider \(who): create, read and delete of a throwaway item work")
    }

    /// What to do when the round trip fails, by provider.
    static func advice(_ provider: SecretServiceProvider) -> String {
        switch provider {
        case .keePassXC:
            return "in KeePassXC, under Tools > Settings > Secret Service Integration, turn off \"Confirm when passwords are "
                + "deleted by clients\" (or answer its window), check that a group is exposed in Database Settings, then run "
                + "keygate doctor again; Keygate completes KeePassXC's prompts, older builds did not"
        case .kWallet:
            return "open the wallet in kwalletmanager5 and allow the Secret Service access, then run keygate doctor again"
        case .gnomeKeyring:
            return "check that gnome-keyring-daemon runs with --components=secrets and its login keyring is unlocked, "
                + "then run keygate doctor again"
        case .keygate:
            return "check keygate-secret-service's log (journalctl --user -u keygate-secret-service-daemon), unlock the "
                + "keychain (keygate unlock), then run keygate doctor again"
        case .other, .unknown:
            return "check the Secret Service's settings (it must let clients create and delete items), or use the "
                + "embedded store (KEYGATE_STORE=embedded)"
        }
    }

    /// The provider's version as the package database records it, asked of dpkg-query (the
    /// database's own reader: its files are dpkg's to lay out); nil when the provider has no
    /// Debian package, dpkg-query is missing or fails, or the package is not installed.
    static func version(of provider: SecretServiceProvider, dpkgQuery: String = "/usr/bin/dpkg-query") -> String? {
        guard let package = provider.debianPackage, let pipe = try? Descriptor.pipe().get() else { return nil }
        var spawn = Spawn([dpkgQuery, "-W", "-f", "${Version}", package])
        spawn.environment = ["PATH=/usr/bin:/bin", "LC_ALL=C"]
        spawn.descriptors = [0: .null, 1: .descriptor(pipe.write.raw), 2: .null]
        let started = spawn.start()
        pipe.write.close()
        guard case .success(let child) = started else { pipe.read.close(); return nil }
        // A version line is short; a read error ends it like EOF, and the exit decides.
        let output = (try? SafeFile.readAll(pipe.read.raw, limit: 64 << 10).get()) ?? []
        pipe.read.close()
        guard case .success(.exited(0)) = child.wait() else { return nil }
        // A Debian version has no white space; whatever follows it is not part of it.
        return String(decoding: output, as: UTF8.self).split(whereSeparator: \.isWhitespace).first.map(String.init)
    }
}
