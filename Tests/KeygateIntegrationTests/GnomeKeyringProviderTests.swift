// The provider matrix on gnome-keyring (42.1 on Debian 12), alone on a private bus with D-Bus
// auto-start off (scripts/provider-session). SecretServiceStoreTests covers gnome-keyring more
// deeply on the suite's own bus; ItemStoreMatrixTests runs the provider matrix on it, and
// this class holds gnome-keyring's own checks (its prompter, a first login).
import Foundation
import XCTest
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class GnomeKeyringProviderTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus

    // MARK: - who answers, and prompts

    /// A display but no prompter (gcr-prompter neither running nor activatable on this bus):
    /// gnome-keyring would dismiss the unlock prompt at once, so Keygate does not ask, and the
    /// locked collection stays exit 36 with gnome-keyring's advice, never a false "canceled".
    func test_unlockPrompt_withADisplayButNoPrompter_isNotAsked_andStaysLocked() throws {
        try ProviderMatrix.own(.gnomeKeyring) { matrix in
            let store = matrix.store(deadline: .seconds(2), unlockPrompt: .auto, windowLimit: .seconds(4))
            let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "u"), label: "u")
            try store.create(attributes, blob: [1], replace: false)
            try store.lockDefaultCollection()
            setenv("DISPLAY", ":4242", 1)
            defer { unsetenv("DISPLAY") }

            do {
                // A store made now: its environment (KeygateEnvironment, taken when it is made) has the display.
                _ = try matrix.store(deadline: .seconds(2), unlockPrompt: .auto, windowLimit: .seconds(4))
                    .search(ItemQuery(exactly: attributes.identity), loadBlobs: true)
                XCTFail("a locked collection was read with no prompter")
            } catch let error as KeychainError {
                XCTAssertEqual(error.code, .interactionNotAllowed, error.message)
                XCTAssertTrue(error.message.contains("restart gnome-keyring-daemon with --unlock"), error.message)
            }
        }
    }

    /// With a display and gnome-keyring's prompter (gcr-prompter) on it, a read of a locked
    /// collection asks gnome-keyring to unlock it, as libsecret does; the password typed into
    /// the "Unlock Login Keyring" window (xdotool) opens it, and the read goes on.
    func test_unlockPrompt_throughGcrPrompter_unlocksWithThePasswordTypedIntoItsWindow() throws {
        try Self.requirePrompterAndXdotool()
        let session = try ProviderSession(.gnomeKeyring, settings: ["PROVIDER_SESSION_DISPLAY": "1"])
        defer { session.stop() }
        let matrix = ProviderMatrix(session: session)
        let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "typed"), label: "typed")
        try matrix.store().create(attributes, blob: [7, 7], replace: false)
        try matrix.store().lockDefaultCollection()
        XCTAssertTrue(try matrix.store().status().locked)

        let env = session.environment(display: true)
        let prompter = try session.startGcrPrompter()
        defer { prompter.terminate(); prompter.waitUntilExit() }
        let typist = Thread {
            for _ in 0..<100 {
                usleep(200_000)
                let found = try? Subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "Unlock"], environment: env,
                                                timeout: 10)
                guard let window = found?.out.split(separator: "\n").first.map(String.init), !window.isEmpty else { continue }
                _ = try? Subprocess.run(["xdotool", "windowfocus", "--sync", window], environment: env, timeout: 10)
                _ = try? Subprocess.run(["xdotool", "type", "--delay", "20", "kg-test"], environment: env, timeout: 10)
                _ = try? Subprocess.run(["xdotool", "key", "Return"], environment: env, timeout: 10)
                return
            }
        }
        typist.start()
        setenv("DISPLAY", session.display, 1)
        defer { unsetenv("DISPLAY") }

        let found = try matrix.store(deadline: .seconds(2), unlockPrompt: .auto, windowLimit: .seconds(30))
            .search(ItemQuery(exactly: attributes.identity), loadBlobs: true)

        XCTAssertEqual(found.map(\.blob), [[7, 7]])
        XCTAssertFalse(try matrix.store().status().locked)
    }

    /// gnome-keyring with no keyring at all (a first login that handed it no password): a write,
    /// with a display and gcr-prompter, creates the default collection through CreateCollection
    /// with the "default" alias; the new password typed twice into gcr-prompter's window
    /// (xdotool) makes it, and the write goes on. With the prompt off, the write fails saying what
    /// to do and nothing is created.
    func test_firstLogin_aWriteCreatesTheDefaultCollection_throughGcrPromptersNewKeyringWindow() throws {
        try Self.requirePrompterAndXdotool()
        let session = try ProviderSession(.gnomeKeyring, settings: ["PROVIDER_SESSION_DISPLAY": "1", "PROVIDER_SESSION_FIRST_LOGIN": "1"])
        defer { session.stop() }
        let matrix = ProviderMatrix(session: session)
        let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "first"), label: "first")
        XCTAssertThrowsError(try matrix.store(unlockPrompt: .never).create(attributes, blob: [5], replace: false)) { error in
            XCTAssertTrue((error as? KeychainError)?.message.contains("gnome-keyring has no default collection") ?? false, "\(error)")
        }

        let prompter = try session.startGcrPrompter()
        defer { prompter.terminate(); prompter.waitUntilExit() }
        let person = try WindowAnswerer(display: session.display, [
            WindowAnswerer.Answer(name: "gcr-prompter", byClass: true, type: "kg-test",
                                  keys: ["Tab", "k", "g", "minus", "t", "e", "s", "t", "Return"]),
        ])
        defer { person.stop() }
        setenv("DISPLAY", session.display, 1)
        defer { unsetenv("DISPLAY") }

        try matrix.store(deadline: .seconds(2), unlockPrompt: .auto, windowLimit: .seconds(30)).create(attributes, blob: [5],
                                                                                                       replace: false)

        XCTAssertEqual(try matrix.store().search(ItemQuery(exactly: attributes.identity), loadBlobs: true).map(\.blob), [[5]],
                       "\(person.answered)")
        let alias = try session.gdbus("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias", ["default"])
        XCTAssertFalse(alias.out.contains("'/'"), alias.out)
    }

    // MARK: - gnome-keyring's prompter

    /// Skips (fails under CI) without gcr-prompter or xdotool.
    private static func requirePrompterAndXdotool() throws {
        for (path, package) in [("/usr/libexec/gcr-prompter", "gcr"), ("/usr/bin/xdotool", "xdotool")] {
            try Requirement.require(FileManager.default.isExecutableFile(atPath: path), "\(path) (apt-get install \(package))")
        }
    }
}
