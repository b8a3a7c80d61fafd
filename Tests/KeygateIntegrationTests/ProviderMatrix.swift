// The provider matrix's shared checks: the failure cases (locked collection, killed daemon,
// hung daemon) and prompts, run against one real provider alone on a private bus
// (ProviderSession: scripts/provider-session); `contract` is ItemStoreContract on its store.
// ItemStoreMatrixTests runs them over every provider (Swift Testing, #expect); the two
// checks one provider's XCTest class calls (unlockPrompt_unlocksThroughTheProvidersPrompt,
// unlockPrompt_unlocksWithThePasswordTypedIntoItsWindow) assert with XCTest.
import Foundation
import Testing
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

/// One provider's running session, shared by the tests of its class.
final class ProviderFixture: @unchecked Sendable {
    // @unchecked: the session is set once, in the class's first setUp, on XCTest's thread.
    private var session: ProviderSession?
    private var person: WindowAnswerer?
    private var failure: Error?
    let provider: ProviderSession.Provider
    /// scripts/provider-session's knobs (PROVIDER_SESSION_*).
    let settings: [String: String]
    /// Windows a person at the provider's display answers for as long as the session runs.
    let answers: [WindowAnswerer.Answer]

    init(_ provider: ProviderSession.Provider, settings: [String: String] = [:], answers: [WindowAnswerer.Answer] = []) {
        self.provider = provider
        self.settings = settings
        self.answers = answers
    }

    /// The shared session, started on first use (a start failure is reported to every test).
    func shared() throws -> ProviderSession {
        if let session { return session }
        if let failure { throw failure }
        do {
            let started = try ProviderSession(provider, settings: settings)
            session = started
            if !answers.isEmpty { person = try WindowAnswerer(display: started.display, answers) }
            return started
        } catch {
            failure = error
            throw error
        }
    }

    /// The windows the person answered so far (WindowAnswerer.answered).
    var answered: [String] { person?.answered ?? [] }

    func stop() {
        person?.stop()
        person = nil
        session?.stop()
        session = nil
    }
}

struct ProviderMatrix {
    /// A session of `provider`'s own, for a check that locks, kills or stops the daemon: started,
    /// given to `body` as a matrix, and stopped.
    static func own(_ provider: ProviderSession.Provider, _ body: (ProviderMatrix) throws -> Void) throws {
        let session = try ProviderSession(provider)
        defer { session.stop() }
        try body(ProviderMatrix(session: session))
    }

    let session: ProviderSession
    let tag: String
    let deadline: Duration
    /// The stores' unlock-prompt setting unless a check asks for another: `.never`, except where
    /// a person answers the provider's windows (KeePassXC as Debian installs it).
    let unlockPrompt: UnlockPromptSetting

    /// `tag` names this matrix's items; a fresh one keeps two checks' items apart.
    init(session: ProviderSession, tag: String = "kg-matrix-\(UUID().uuidString.prefix(8))", deadline: Duration = .seconds(5), unlockPrompt: UnlockPromptSetting = .never) {
        self.session = session
        self.tag = tag
        self.deadline = deadline
        self.unlockPrompt = unlockPrompt
    }

    /// A store on this provider's bus, with its own connection (no unlock prompt unless asked).
    func store(deadline: Duration? = nil, unlockPrompt: UnlockPromptSetting? = nil,
               windowLimit: Duration = SecretServicePrompt.windowLimit) -> SecretServiceStore {
        SecretServiceStore(deadline: deadline ?? self.deadline, connection: SecretServiceConnection(address: session.address, environment: .process()),
                           unlockPrompt: unlockPrompt ?? self.unlockPrompt, windowLimit: windowLimit)
    }

    var contract: ItemStoreContract { ItemStoreContract(store: store(), tag: tag) }

    func cleanUp() {
        let store = self.store()
        _ = try? store.delete(ItemQuery(itemClass: .genericPassword, service: tag))
        _ = try? store.delete(ItemQuery(itemClass: .internetPassword, server: tag + ".example"))
    }

    /// The default collection's D-Bus path.
    func defaultCollection() throws -> String {
        try SecretServiceConnection(address: session.address, environment: .process()).defaultCollection(ServiceDeadline(deadline))
    }

    // MARK: checks beyond the contract

    /// The store names the provider it talks to.
    func provider_isNamed(_ expected: SecretServiceProvider) {
        #expect(store().provider() == expected)
    }

    /// Create then delete, each through whatever prompt the provider answers with.
    func createAndDelete_roundTrip() throws {
        let store = self.store()
        let attributes = ItemAttributes(identity: .generic(service: tag, account: "prompted"), label: "prompted")
        try store.create(attributes, blob: [1, 2, 3], replace: false)
        #expect(try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: true).map(\.blob) == [[1, 2, 3]])
        #expect(try store.delete(ItemQuery(exactly: attributes.identity)) == 1)
        #expect(try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: false).count == 0)
    }

    /// With the daemon killed, every operation is "not available", naming no other provider's fix.
    func operations_failNotAvailable_whenDaemonKilled() throws {
        let store = self.store(deadline: .seconds(2))
        _ = try store.search(ItemQuery(service: tag), loadBlobs: false)  // warm: connection and session made
        kill(session.providerPID, SIGKILL)
        waitUntilGone(session.providerPID)

        try expectSearchNotAvailable(store, within: .seconds(4), saying: ["no Secret Service on the session bus"], "killed")
    }

    /// A search of this matrix's items on `store` fails "not available", saying each of `phrases`,
    /// within `limit`; `state` is what was done to the daemon, for the failure's message.
    private func expectSearchNotAvailable(_ store: SecretServiceStore, within limit: Duration, saying phrases: [String],
                                          _ state: String) throws {
        let started = ContinuousClock.now
        do {
            _ = try store.search(ItemQuery(service: tag), loadBlobs: true)
            Issue.record("a search with the daemon \(state) succeeded")
        } catch let error as KeychainError {
            #expect(error.code == .notAvailable, Comment(rawValue: error.message))
            for phrase in phrases {
                #expect(error.message.contains(phrase), Comment(rawValue: error.message))
            }
        }
        #expect(ContinuousClock.now - started < limit)
    }

    /// With the daemon stopped (SIGSTOP), a call fails within its deadline and names the provider.
    func operations_failWithinDeadline_whenDaemonHung(naming daemon: String) throws {
        let store = self.store(deadline: .seconds(1))
        _ = try store.search(ItemQuery(service: tag), loadBlobs: false)
        kill(session.providerPID, SIGSTOP)
        defer { kill(session.providerPID, SIGCONT) }

        try expectSearchNotAvailable(store, within: .seconds(3), saying: ["did not answer within 1 s", daemon], "stopped")
        kill(session.providerPID, SIGCONT)
        #expect(try store.search(ItemQuery(service: tag), loadBlobs: false).count == 0, "recovers once resumed")
    }

    /// With the default collection locked (Service.Lock), reads and writes are "interaction not
    /// allowed" with the provider's own advice, and the store never unlocks it unasked.
    func operations_failLocked_withProviderAdvice(_ advice: String) throws {
        let store = self.store()
        let attributes = ItemAttributes(identity: .generic(service: tag, account: "locked"), label: "locked")
        try store.create(attributes, blob: [1], replace: false)
        try store.lockDefaultCollection()

        for (name, body) in [("search", { _ = try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: true) }),
                             ("create", { try store.create(attributes, blob: [2], replace: true) }),
                             ("delete", { _ = try store.delete(ItemQuery(exactly: attributes.identity)) })] as [(String, () throws -> Void)] {
            do {
                try body()
                Issue.record("\(name) on a locked collection succeeded")
            } catch let error as KeychainError {
                #expect(error.code == .interactionNotAllowed, "\(name): \(error.message)")
                #expect(error.message.contains(SecretServiceFailure.lockedPrefix), "\(name): \(error.message)")
                #expect(error.message.contains(advice), "\(name): \(error.message)")
            }
        }
        #expect(try store.status().locked)
    }

    /// With the collection locked and the unlock prompt allowed, the store asks the provider to
    /// unlock it; the provider's window (on its display) goes unanswered, so the store waits
    /// `windowLimit`, says a window is waiting, dismisses the prompt and fails saying so.
    /// `windowStays`: what the provider does with Prompt.Dismiss, measured: its unlock window is
    /// still on its display a second later (the message then says so), or it is gone.
    func unlockPrompt_waitsForTheWindow_thenFailsSayingSo(windowStays: Bool) throws {
        let store = self.store(deadline: .seconds(1), unlockPrompt: .auto, windowLimit: .seconds(3))
        let attributes = ItemAttributes(identity: .generic(service: tag, account: "unlock"), label: "unlock")
        try store.create(attributes, blob: [1], replace: false)
        try store.lockDefaultCollection()
        let notices = NoticeLog()
        SecretServicePrompt.onWindowWait { notices.append($0) }
        defer { SecretServicePrompt.onWindowWait { _ in } }

        let watcher = UnlockWindowWatcher(self)
        let started = ContinuousClock.now
        do {
            _ = try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: true)
            Issue.record("a search needing an unanswered unlock succeeded")
        } catch let error as KeychainError {
            #expect(error.code == .interactionNotAllowed, Comment(rawValue: error.message))
            #expect(error.message.contains("window waited 3 s"), Comment(rawValue: error.message))
            #expect(error.message.contains("leaves its window open: answer it") == windowStays, Comment(rawValue: error.message))
        }
        let elapsed = ContinuousClock.now - started
        let seen = watcher.stop()
        #expect(elapsed >= .seconds(3))
        #expect(elapsed < .seconds(8))
        // The stated wait is the wait that happens: 3 s in all, the call's 1 s deadline within it.
        #expect(elapsed < .milliseconds(3_700), "waited \(elapsed) for a stated 3 s")
        #expect(notices.lines.count == 1, "\(notices.lines)")
        // The notice states what is left of the 3 s: about 2 s, never the whole limit again.
        let left = notices.lines.first?.components(separatedBy: "waiting up to ").last?.components(separatedBy: " s more").first
        #expect((1.5...2.0).contains(Double(left ?? "") ?? 0), "\(notices.lines)")
        // What the provider does with Prompt.Dismiss: is its window still on its display a second later?
        #expect(!seen.isEmpty, "\(session.provider.rawValue)'s unlock window was never shown")
        usleep(1_000_000)
        let after = visibleUnlockWindows()
        print("dismiss-measure: \(session.provider.rawValue): unlock window \(seen) while waiting, \(after) 1 s after Prompt.Dismiss")
        #expect(!after.isEmpty == windowStays, "windows 1 s after Prompt.Dismiss: \(after)")
        #expect(notices.lines.first?.contains("window is waiting for your answer") ?? false, "\(notices.lines)")
    }

    /// How xdotool finds the provider's unlock window on its display: gcr-prompter's windows
    /// have no name, so by class; KeePassXC's "Unlock Database"; kwalletd's password dialog,
    /// "KDE Wallet Service".
    var unlockWindowSearch: [String] {
        switch session.provider {
        case .gnomeKeyring: return ["--class", "gcr-prompter"]
        case .keePassXC: return ["--name", "Unlock"]
        case .kWallet: return ["--name", "KDE Wallet"]
        }
    }

    /// The ids of the provider's unlock windows visible on its display now.
    func visibleUnlockWindows() -> [String] {
        guard !session.display.isEmpty else { return [] }
        let found = try? Subprocess.run(["xdotool", "search", "--onlyvisible"] + unlockWindowSearch,
                                        environment: session.environment(display: true), timeout: 10)
        return found?.out.split(separator: "\n").map(String.init) ?? []
    }

    /// With the collection locked but the provider able to open it without a window (kwalletd
    /// with its wallet opened by the login key, as at every login), a read unlocks it through
    /// Service.Unlock and its prompt, as libsecret does, and goes on, even with the unlock prompt
    /// off: kwalletd shows no window for it. Where kwalletrc asks before each program ("Prompt on
    /// Open", read from Keygate's own XDG_CONFIG_HOME here) it would show one: the prompt off
    /// then keeps the locked error.
    func unlockPrompt_unlocksThroughTheProvidersPrompt(reopen: () throws -> Void) throws {
        let attributes = ItemAttributes(identity: .generic(service: tag, account: "reopen"), label: "reopen")
        try store().create(attributes, blob: [4, 2], replace: false)
        try store().lockDefaultCollection()
        try reopen()

        let config = session.folder + "/keygate-config"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try "[Wallet]\nPrompt on Open=true\n".write(toFile: config + "/kwalletrc", atomically: true, encoding: .utf8)
        setenv("XDG_CONFIG_HOME", config, 1)
        XCTAssertThrowsError(try store(unlockPrompt: .never).search(ItemQuery(exactly: attributes.identity), loadBlobs: true))
        unsetenv("XDG_CONFIG_HOME")
        XCTAssertTrue(try store().status().locked)

        let found = try store(unlockPrompt: .never).search(ItemQuery(exactly: attributes.identity), loadBlobs: true)

        XCTAssertEqual(found.map(\.blob), [[4, 2]])
        XCTAssertFalse(try store().status().locked)
        XCTAssertEqual(visibleUnlockWindows(), [], "no window was shown")
    }

    /// The unlock window dismissed (Prompt.Dismiss, as its Cancel button does) is the user's
    /// cancel: errSecUserCanceled, which the CLI exits 128 with.
    func unlockPrompt_dismissed_isUserCanceled() throws {
        let store = self.store(deadline: .seconds(1), unlockPrompt: .auto, windowLimit: .seconds(30))
        let attributes = ItemAttributes(identity: .generic(service: tag, account: "dismiss"), label: "dismiss")
        try store.create(attributes, blob: [1], replace: false)
        try store.lockDefaultCollection()
        let outcome = PromptOutcome()
        let thread = Thread {
            do {
                _ = try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: true)
            } catch {
                outcome.error = error
            }
            outcome.done.signal()
        }
        thread.start()

        var dismissed = 0
        for _ in 0..<100 where dismissed == 0 {
            usleep(100_000)
            let listed = try Subprocess.run(["gdbus", "introspect", "--address", session.address, "--dest",
                                             "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets/prompt"],
                                            timeout: 10)
            for line in listed.out.split(separator: "\n") where line.trimmingCharacters(in: .whitespaces).hasPrefix("node ") {
                let node = line.trimmingCharacters(in: .whitespaces).dropFirst("node ".count).trimmingCharacters(in: CharacterSet(charactersIn: " {"))
                let path = "/org/freedesktop/secrets/prompt/" + node
                if (try? session.gdbus(path, "org.freedesktop.Secret.Prompt.Dismiss", []))?.status == 0 { dismissed += 1 }
            }
        }

        #expect(dismissed > 0, "no prompt to dismiss appeared")
        #expect(outcome.done.wait(timeout: .now() + 30) == .success)
        let error = try #require(outcome.error as? KeychainError, "\(String(describing: outcome.error))")
        #expect(error.code == .userCanceled, Comment(rawValue: error.message))
        #expect(error.message.contains("was dismissed"), Comment(rawValue: error.message))
    }

    /// A locked collection, the unlock prompt allowed, and a person who types the password into
    /// the provider's unlock window (xdotool on the provider's display): the read goes on.
    func unlockPrompt_unlocksWithThePasswordTypedIntoItsWindow(named windowName: String) throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/xdotool"), "xdotool (apt-get install xdotool)")
        let attributes = ItemAttributes(identity: .generic(service: tag, account: "typed"), label: "typed")
        try store().create(attributes, blob: [7, 7], replace: false)
        try store().lockDefaultCollection()
        var withDisplay = session.environment
        withDisplay["DISPLAY"] = session.display
        let env = withDisplay
        let typist = Thread {
            for _ in 0..<100 {
                usleep(200_000)
                let found = try? Subprocess.run(["xdotool", "search", "--onlyvisible", "--name", windowName], environment: env,
                                                timeout: 10)
                guard let window = found?.out.split(separator: "\n").last.map(String.init), !window.isEmpty else { continue }
                usleep(500_000)  // the dialog takes the keyboard focus once it is shown
                _ = try? Subprocess.run(["xdotool", "windowfocus", "--sync", window], environment: env, timeout: 10)
                _ = try? Subprocess.run(["xdotool", "type", "--delay", "20", "kg-test"], environment: env, timeout: 10)
                _ = try? Subprocess.run(["xdotool", "key", "Return"], environment: env, timeout: 10)
                return
            }
        }
        typist.start()

        let found = try store(deadline: .seconds(2), unlockPrompt: .auto, windowLimit: .seconds(30))
            .search(ItemQuery(exactly: attributes.identity), loadBlobs: true)

        XCTAssertEqual(found.map(\.blob), [[7, 7]])
        XCTAssertFalse(try store().status().locked)
    }

    /// Until `pid` is gone or a zombie (nobody may reap it here), at most 2 s.
    private func waitUntilGone(_ pid: pid_t) {
        for _ in 0..<100 {
            guard let stat = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return }
            let fields = String(decoding: stat, as: UTF8.self).split(separator: " ")
            if fields.count > 2 && fields[2] == "Z" { return }
            usleep(20_000)
        }
    }
}

/// Notices told by SecretServicePrompt, collected for a check.
final class NoticeLog: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var stored: [String] = []
    func append(_ line: String) { lock.lock(); stored.append(line); lock.unlock() }
    var lines: [String] { lock.lock(); defer { lock.unlock() }; return stored }
}

/// What a background call ended with.
final class PromptOutcome: @unchecked Sendable {
    // @unchecked: `error` is written before `done` is signalled and read after.
    var error: Error?
    let done = DispatchSemaphore(value: 0)
}

/// Watches the provider's display for its unlock window while a call waits for it (every 200 ms).
final class UnlockWindowWatcher: @unchecked Sendable {
    // @unchecked: `seen` and `stopped` are guarded by `lock`.
    private let lock = NSLock()
    private var seen: [String] = []
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    init(_ matrix: ProviderMatrix) {
        Thread { [self] in
            while !isStopped {
                let windows = matrix.visibleUnlockWindows()
                lock.lock()
                seen += windows.filter { !seen.contains($0) }
                lock.unlock()
                usleep(200_000)
            }
            finished.signal()
        }.start()
    }

    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    /// Stops watching; the windows seen.
    func stop() -> [String] {
        lock.lock()
        stopped = true
        lock.unlock()
        finished.wait()
        lock.lock()
        defer { lock.unlock() }
        return seen
    }
}
