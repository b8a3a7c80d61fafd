// A person at a provider's display, for the provider matrix: answers the windows a provider
// shows (KeePassXC's "Access Request", its delete confirmation, an unlock dialog) through
// xdotool on the session's Xvfb, as a user would, and records which windows it answered, so a
// test can assert that a window was (or was not) shown. Ends when `stop()` is called.
import Foundation

public final class WindowAnswerer: @unchecked Sendable {
    // @unchecked: `answered` is guarded by `lock`; the rest is set once in init.
    /// A window to answer: xdotool's --name pattern (a regular expression; with `byClass`, its
    /// --class pattern: gcr-prompter's windows have no name), then the text to type into it (nil:
    /// none) and the keys to press after (xdotool key names).
    public struct Answer: Sendable {
        public let name: String
        public let byClass: Bool
        public let type: String?
        public let keys: [String]
        public init(name: String, byClass: Bool = false, type: String? = nil, keys: [String]) {
            self.name = name
            self.byClass = byClass
            self.type = type
            self.keys = keys
        }

        var search: [String] { ["xdotool", "search", "--onlyvisible", byClass ? "--class" : "--name", name] }
    }

    private let lock = NSLock()
    private var seen: [String] = []
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    /// Starts answering `answers` on `display` at once (polling every 200 ms).
    public init(display: String, _ answers: [Answer]) throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/xdotool"), "xdotool (apt-get install xdotool)")
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = display
        let environment = env
        Thread { [self] in
            while !isStopped {
                for answer in answers { self.answer(answer, environment) }
                usleep(200_000)
            }
            finished.signal()
        }.start()
    }

    /// The names of the windows answered so far, in order.
    public var answered: [String] { lock.lock(); defer { lock.unlock() }; return seen }

    /// Stops answering; returns when the answering thread has ended.
    public func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        if first { finished.wait() }
    }

    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    private func answer(_ answer: Answer, _ env: [String: String]) {
        let found = try? Subprocess.run(answer.search, environment: env, timeout: 10)
        guard let window = found?.out.split(separator: "\n").last.map(String.init), !window.isEmpty else { return }
        usleep(500_000)  // the dialog takes the keyboard focus once it is shown
        let title = (try? Subprocess.run(["xdotool", "getwindowname", window], environment: env, timeout: 10))?.out
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? answer.name
        _ = try? Subprocess.run(["xdotool", "windowfocus", "--sync", window], environment: env, timeout: 10)
        if let text = answer.type {
            _ = try? Subprocess.run(["xdotool", "type", "--delay", "20", text], environment: env, timeout: 10)
        }
        if !answer.keys.isEmpty {
            _ = try? Subprocess.run(["xdotool", "key", "--delay", "100"] + answer.keys, environment: env, timeout: 10)
        }
        lock.lock()
        seen.append(title)
        lock.unlock()
        // Once answered, a window closes; wait for that, so it is not answered twice.
        for _ in 0..<25 {
            let still = try? Subprocess.run(answer.search, environment: env, timeout: 10)
            if !(still?.out.split(separator: "\n").map(String.init).contains(window) ?? false) { return }
            usleep(200_000)
        }
    }
}
