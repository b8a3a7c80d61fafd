// The one way Keygate starts a program (Spawn) and makes a pipe (Descriptor.pipe), with real
// processes: the child gets exactly the descriptors it is given, both ends of every pipe are
// close-on-exec from the start, exits and signals decode as a shell reports them, and no other
// file starts a process or makes a pipe by hand (the pipe-then-fcntl window this closes).
import Foundation
@testable import KeygateCore
import KeygateTestSupport
import XCTest

final class SpawnTests: XCTestCase {
    private func run(_ script: String, descriptors: [Int32: Spawn.Stream] = [:]) throws -> (Spawn.Exit, String) {
        let out = try Descriptor.pipe().get()
        var spawn = Spawn(["/bin/sh", "-c", script])
        spawn.environment = ["PATH=/usr/bin:/bin"]
        spawn.descriptors = descriptors.merging([1: .descriptor(out.write.raw)]) { mine, _ in mine }
        let child = try spawn.start().get()
        out.write.close()
        let text = String(decoding: try SafeFile.readAll(out.read.raw, limit: 1 << 20).get(), as: UTF8.self)
        return (try child.wait().get(), text)
    }

    func test_bothEndsOfAPipeAreCloseOnExec_andAboveTheLowestNumber() throws {
        let pipe = try Descriptor.pipe(lowest: 100).get()
        for end in [pipe.read, pipe.write] {
            XCTAssertGreaterThanOrEqual(end.raw, 100)
            XCTAssertEqual(fcntl(end.raw, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC, "fd \(end.raw) is close-on-exec")
        }
        XCTAssertNil(pipe.write.writeAll(Array("hi".utf8)))
        XCTAssertEqual(pipe.read.readExactly(2, deadline: MonotonicClock.milliseconds + 1000), Array("hi".utf8))
        XCTAssertNil(pipe.read.readExactly(1, deadline: MonotonicClock.milliseconds + 50), "nothing more before the deadline")
        let raw = pipe.read.raw
        pipe.read.close()
        XCTAssertEqual(fcntl(raw, F_GETFD), -1, "closed once, by its owner")
    }

    func test_theChildGetsOnlyTheDescriptorsItIsGiven() throws {
        let kept = try Descriptor.pipe().get()
        let given = try Descriptor.pipe().get()
        let (exit, listing) = try run("ls /proc/self/fd", descriptors: [7: .descriptor(given.read.raw), 0: .null])
        XCTAssertEqual(exit, .exited(0))
        let open = Set(listing.split(separator: "\n").compactMap { Int32($0) })
        XCTAssertTrue(open.contains(7), "the descriptor given as 7 is there: \(open)")
        for fd in [kept.read.raw, kept.write.raw, given.read.raw, given.write.raw] where fd != 7 {
            XCTAssertFalse(open.contains(fd), "fd \(fd) of ours did not leak into the child: \(open)")
        }
    }

    func test_exitsAndSignalsDecodeAsAShellReportsThem() throws {
        XCTAssertEqual(try run("exit 3").0, .exited(3))
        let (killed, _) = try run("kill -TERM $$")
        XCTAssertEqual(killed, .signaled(SIGTERM))
        XCTAssertEqual(killed.shellStatus, 128 + SIGTERM)
        let missing = Spawn(["/nonexistent/program"]).start()
        guard case .failure(let e) = missing else { return XCTFail("a missing program started") }
        XCTAssertEqual(e.code, ENOENT)
    }

    func test_theEnvironmentIsExactlyTheOneGiven() throws {
        var spawn = Spawn(["/usr/bin/env"])
        let out = try Descriptor.pipe().get()
        spawn.environment = ["ONLY=this"]
        spawn.descriptors = [1: .descriptor(out.write.raw)]
        let child = try spawn.start().get()
        out.write.close()
        let text = String(decoding: try SafeFile.readAll(out.read.raw, limit: 1 << 16).get(), as: UTF8.self)
        XCTAssertEqual(try child.wait().get(), .exited(0))
        XCTAssertEqual(text, "ONLY=this\n")
    }

    /// Programs are started and pipes made in System/ only: no file writes posix_spawn, fork,
    /// exec, pipe() or waitpid by hand again (the gatekeeper's daemon is started by Spawn too) (the issue found five copies, and pipe() then fcntl(FD_CLOEXEC)
    /// left a window in which another thread's spawn inherited the descriptor).
    func test_noFileOutsideSystemStartsAProcessOrMakesAPipeByHand() throws {
        let allowed: Set<String> = [
            "KeygateCore/System/Spawn.swift", "KeygateCore/System/Descriptor.swift",
            // Embedded Swift inside the PAM application's process: no Foundation, no KeygateCore.
            "PAMKeygateModule/Module.swift",
        ]
        let pattern = try NSRegularExpression(pattern: #"(?<![.\w])(posix_spawnp?|pipe|pipe2|waitpid|fork|vfork|execve|execv|execvp)\("#)
        let sources = try PackagePaths.swiftSources()
        var found: [String] = []
        for (file, text) in sources.sorted(by: { $0.key < $1.key }) where !allowed.contains(file) {
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                let s = String(line)
                if pattern.firstMatch(in: s, range: NSRange(location: 0, length: (s as NSString).length)) != nil {
                    found.append("\(file): \(s.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertGreaterThan(sources.count, 100, "the sources were read")
        XCTAssertEqual(found, [], "start processes with Spawn and make pipes with Descriptor.pipe")
    }
}
