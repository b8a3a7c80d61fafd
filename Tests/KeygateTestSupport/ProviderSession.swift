// One Secret Service provider (gnome-keyring, KeePassXC, kwalletd5) alone on a private session
// bus, started by scripts/provider-session, for the provider matrix. The bus has no service
// folders, so D-Bus auto-start is off and no other provider can take the name. Tests reach it
// through its address (SecretServiceStore over its own SecretServiceConnection), never through
// this process's DBUS_SESSION_BUS_ADDRESS. `stop()` ends only the processes it started.
import Foundation
import XCTest

public final class ProviderSession: @unchecked Sendable {
    // @unchecked: every field is set once in init.
    public enum Provider: String, Sendable {
        case gnomeKeyring = "gnome-keyring"
        case keePassXC = "keepassxc"
        case kWallet = "kwallet"

        /// The programs the provider needs, each with the Debian package that ships it.
        var programs: [(path: String, package: String)] {
            var out = [("/usr/bin/dbus-daemon", "dbus-daemon"), ("/usr/bin/dbus-send", "dbus-bin"),
                       ("/usr/bin/gdbus", "libglib2.0-bin")]
            switch self {
            case .gnomeKeyring: out.append(("/usr/bin/gnome-keyring-daemon", "gnome-keyring"))
            case .keePassXC:
                out += [("/usr/bin/keepassxc", "keepassxc"), ("/usr/bin/keepassxc-cli", "keepassxc"),
                        ("/usr/bin/Xvfb", "xvfb"), ("/usr/bin/python3", "python3")]
            case .kWallet:
                out += [("/usr/bin/kwalletd5", "libkf5wallet-bin"), ("/usr/bin/Xvfb", "xvfb"), ("/usr/bin/python3", "python3")]
            }
            return out
        }
    }

    public let provider: Provider
    public let folder: String
    /// The private bus's D-Bus address.
    public let address: String
    /// The display the provider's windows go to (empty for gnome-keyring).
    public let display: String
    /// The provider's process id (a new one after `restart()` or `relogin()`).
    public private(set) var providerPID: pid_t
    /// scripts/provider-session's knobs this session was started with (given again to `relogin`).
    private let settings: [String: String]

    /// Starts `provider` (skips locally, fails under CI, when it is not installed). `settings`
    /// are scripts/provider-session's knobs (PROVIDER_SESSION_*).
    public init(_ provider: Provider, settings: [String: String] = [:]) throws {
        var programs = provider.programs
        if settings["PROVIDER_SESSION_PAM_LOGIN"] != nil {
            programs += Self.pamLoginPrograms
        }
        for program in programs {
            try Requirement.require(FileManager.default.fileExists(atPath: program.path),
                                    "\(program.path) (apt-get install \(program.package), or run scripts/install-deps)")
        }
        self.provider = provider
        self.settings = settings
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kg-provider-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let script = PackagePaths.scripts + "/provider-session"
        var env = ProcessInfo.processInfo.environment
        env.merge(settings) { _, new in new }
        let started = try Subprocess.run([script, "start", provider.rawValue, folder], environment: env, timeout: 60)
        var values: [String: String] = [:]
        let written = (try? String(contentsOfFile: folder + "/session.env", encoding: .utf8)) ?? ""
        for line in written.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        guard started.status == 0, let address = values["DBUS_SESSION_BUS_ADDRESS"],
              let pid = values["PROVIDER_PID"].flatMap({ pid_t($0) }) else {
            let log = (try? String(contentsOfFile: folder + "/provider.log", encoding: .utf8)) ?? ""
            _ = try? Subprocess.run([script, "stop", folder], timeout: 30)
            throw RequirementMissing(description: "\(provider.rawValue) did not start: \(started.err)\n\(log)")
        }
        self.address = address
        display = values["DISPLAY"] ?? ""
        providerPID = pid
    }

    /// Starts the provider again on the same bus, display and files, after a test killed it
    /// (scripts/provider-session restart), and waits until its default collection is back.
    public func restart() throws {
        let script = PackagePaths.scripts + "/provider-session"
        let restarted = try Subprocess.run([script, "restart", folder], timeout: 60)
        let written = (try? String(contentsOfFile: folder + "/session.env", encoding: .utf8)) ?? ""
        let pid = written.split(separator: "\n").first { $0.hasPrefix("PROVIDER_PID=") }.flatMap { pid_t($0.dropFirst(13)) }
        guard restarted.status == 0, let pid else {
            throw RequirementMissing(description: "\(provider.rawValue) did not start again: \(restarted.err)")
        }
        providerPID = pid
    }

    /// What a login through real pam_kwallet5 needs (PROVIDER_SESSION_PAM_LOGIN).
    static let pamLoginPrograms: [(path: String, package: String)] = [
        ("/usr/lib/x86_64-linux-gnu/security/pam_kwallet5.so", "libpam-kwallet5"),
        ("/usr/share/libpam-kwallet-common/pam_kwallet_init", "libpam-kwallet-common"),
        ("/usr/sbin/runuser", "util-linux"), ("/usr/bin/cc", "gcc"),
    ]

    /// A session whose kwalletd5 is started by a login through real libpam and pam_kwallet5 as
    /// `user` (scripts/provider-session with PROVIDER_SESSION_PAM_LOGIN), on the user's home as
    /// it is: a fresh account's is a first login. Needs root.
    public static func kWalletLogin(_ user: TestUser) throws -> ProviderSession {
        try ProviderSession(.kWallet, settings: ["PROVIDER_SESSION_PAM_LOGIN": user.name,
                                                 "PROVIDER_SESSION_PAM_PASSWORD": user.password])
    }

    /// For a `kWalletLogin` session: kwalletd5 ends as at a logout (SIGTERM), and the user logs
    /// in again through PAM (scripts/provider-session relogin), as at the next login.
    public func relogin() throws {
        var env = ProcessInfo.processInfo.environment
        env.merge(settings) { _, new in new }
        let again = try Subprocess.run([PackagePaths.scripts + "/provider-session", "relogin", folder], environment: env,
                                       timeout: 60)
        let written = (try? String(contentsOfFile: folder + "/session.env", encoding: .utf8)) ?? ""
        let pid = written.split(separator: "\n").first { $0.hasPrefix("PROVIDER_PID=") }.flatMap { pid_t($0.dropFirst(13)) }
        guard again.status == 0, let pid else {
            throw RequirementMissing(description: "kwalletd5 did not start again at the next login: \(again.err)")
        }
        providerPID = pid
    }

    /// Where the provider keeps its items on disk (scripts/provider-session's layout): gnome-keyring's
    /// keyrings folder, KeePassXC's database, kwalletd5's wallet folder.
    public var storePath: String {
        switch provider {
        case .gnomeKeyring: return folder + "/data/keyrings"
        case .keePassXC: return folder + "/test.kdbx"
        case .kWallet: return folder + "/data/kwalletd"
        }
    }

    /// Each file at `storePath` (or below it) with its inode, size and modification time: a save
    /// writes or replaces one of them, so two signatures differ once the provider has saved.
    public func storeSignature() -> [String] {
        var paths = [storePath]
        if let below = FileManager.default.enumerator(atPath: storePath) {
            paths += below.compactMap { $0 as? String }.map { storePath + "/" + $0 }
        }
        return paths.sorted().compactMap { path in
            var info = stat()
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
            return "\(path) \(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
        }
    }

    /// Waits until the provider's files differ from `before` (it saved), at most `seconds`;
    /// returns the seconds it waited (until the files stayed the same for 200 ms), or nil when nothing was saved in time.
    @discardableResult
    public func waitUntilSaved(since before: [String], atMost seconds: Double) -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < seconds {
            let now = storeSignature()
            if now != before {
                // Written through: the same files 200 ms later (a save in progress is not a save).
                var settled = now
                repeat { usleep(200_000); let again = storeSignature(); if again == settled { break }; settled = again }
                while Date().timeIntervalSince(start) < seconds
                return Date().timeIntervalSince(start)
            }
            usleep(20_000)
        }
        return nil
    }

    /// Kills the provider at once (SIGKILL: nothing saved on the way out) and waits until it is gone.
    public func killProvider() {
        kill(providerPID, SIGKILL)
        for _ in 0..<200 {
            guard let stat = FileManager.default.contents(atPath: "/proc/\(providerPID)/stat") else { return }
            let fields = String(decoding: stat, as: UTF8.self).split(separator: " ")
            if fields.count > 2 && fields[2] == "Z" { return }
            usleep(10_000)
        }
    }

    /// Stops what `init` started and removes its folder.
    public func stop() {
        _ = try? Subprocess.run([PackagePaths.scripts + "/provider-session", "stop", folder], timeout: 30)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The environment a child process needs to reach this provider.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env.removeValue(forKey: "DISPLAY")
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        return env
    }

    /// `environment`, with the provider's display as DISPLAY when `display` is true (for a
    /// program that shows or finds windows there: gcr-prompter, xdotool).
    public func environment(display: Bool) -> [String: String] {
        var env = environment
        if display { env["DISPLAY"] = self.display }
        return env
    }

    /// kwalletd5 only: opens the wallet with the login key, as pam_kwallet5 does at login
    /// (the same fixed test key scripts/provider-session uses).
    public func pamOpenWallet() throws {
        let hash = "[" + (0..<56).map { "0x" + String(($0 * 7 % 256) | 0x100, radix: 16).dropFirst() }.joined(separator: ",") + "]"
        let opened = try kWalletCall("pamOpen", ["kdewallet", hash, "0"])
        guard opened.status == 0 else { throw RequirementMissing(description: "kwalletd5 pamOpen failed: \(opened.err)") }
    }

    /// kwalletd5 only: calls a method of its own interface (org.kde.KWallet) with gdbus.
    public func kWalletCall(_ method: String, _ arguments: [String]) throws -> ProcessResult {
        try Subprocess.run(["gdbus", "call", "--address", address, "--dest", "org.kde.kwalletd5", "--object-path",
                            "/modules/kwalletd5", "--method", "org.kde.KWallet." + method] + arguments, timeout: 20)
    }

    /// gnome-keyring only: its prompter, gcr-prompter, started on this session's display, once it
    /// owns its bus name (at most 5 s). The caller terminates it.
    public func startGcrPrompter() throws -> Process {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/libexec/gcr-prompter"),
                                "/usr/libexec/gcr-prompter (apt-get install gcr)")
        let prompter = Process()
        prompter.executableURL = URL(fileURLWithPath: "/usr/libexec/gcr-prompter")
        prompter.environment = environment(display: true)
        prompter.standardOutput = FileHandle.nullDevice
        prompter.standardError = FileHandle.nullDevice
        try prompter.run()
        for _ in 0..<50 {
            let owned = try gdbus("/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", ["org.gnome.keyring.SystemPrompter"])
            if owned.out.contains("true") { break }
            usleep(100_000)
        }
        return prompter
    }

    /// Locks the default collection with gdbus: Service.Lock, and Prompt.Prompt on the prompt
    /// it answers with (KeePassXC asks one; gnome-keyring ties a prompt to the caller, so this
    /// suits KeePassXC and kwalletd, whose prompts any client may complete).
    public func lockDefaultCollection() throws {
        let alias = try gdbus("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias", ["default"])
        let path = alias.out.split(separator: "'").dropFirst().first.map(String.init) ?? ""
        let lock = try gdbus("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Lock", ["['\(path)']"])
        guard lock.status == 0 else { throw RequirementMissing(description: "could not lock \(path): \(lock.err)") }
        if let prompt = lock.out.split(separator: "'").map(String.init).first(where: { $0.contains("/prompt/") }) {
            _ = try gdbus(prompt, "org.freedesktop.Secret.Prompt.Prompt", ["''"])
        }
        for _ in 0..<50 {
            let locked = try gdbus(path, "org.freedesktop.DBus.Properties.Get", ["org.freedesktop.Secret.Collection", "Locked"])
            if locked.out.contains("true") { return }
            usleep(100_000)
        }
        throw RequirementMissing(description: "\(path) did not lock")
    }

    /// Calls a Secret Service method with gdbus on this bus; its output.
    @discardableResult
    public func gdbus(_ path: String, _ method: String, _ arguments: [String]) throws -> ProcessResult {
        try Subprocess.run(["gdbus", "call", "--address", address, "--dest", "org.freedesktop.secrets",
                            "--object-path", path, "--method", method] + arguments, timeout: 20)
    }
}
