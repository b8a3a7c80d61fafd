// The TPM-sealed host key end to end, with a real software TPM (swtpm) as the TPM
// and the real keygate binary as root (who derives the device key directly). A file
// host key with a this-device-only item on it is moved into the TPM (the item still
// opens: the same key was sealed; the plain file is gone); a new item opens too;
// then the TPM's state is wiped (new seeds, as after TPM2_Clear) and neither opens:
// exit 53 with a message that says the TPM was reset and what to do, and
// `keygate doctor` reports it. Also: `--tpm` where no TPM answers changes nothing.
// The host key lives at a temporary path (test-hook builds read KEYGATE_TEST_HOST_KEY).
import Foundation
import Glibc
import KeygateTestSupport
import XCTest

final class TPMHostKeyTests: XCTestCase {
    private var sandbox: RootKeychainSandbox?
    private var tpm: SoftwareTPM?

    override func setUpWithError() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: SoftwareTPM.binary),
                                "swtpm, a software TPM2 (apt-get install swtpm swtpm-tools)")
        sandbox = try RootKeychainSandbox(prefix: "keygate-tpm")
    }

    override func tearDown() {
        tpm?.stop()
        sandbox?.remove()
    }

    private var dir: String { sandbox?.directory ?? "/nonexistent" }
    private var hostKeyPath: String { sandbox?.hostKeyPath ?? "/nonexistent" }
    private var environment: [String: String] { sandbox?.environment ?? [:] }

    func test_sealedHostKey_opensItemsWithTheTPM_andNotAfterTheTPMStateIsReset() throws {
        let tpm = try SoftwareTPM(stateFolder: dir + "/tpm-state", pidFile: dir + "/swtpm.pid")
        self.tpm = tpm
        // The reset runs inside the one script: the ephemeral keyring (and its items) lives only as long.
        try tpm.resetScript().write(toFile: dir + "/reset-tpm", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir + "/reset-tpm")
        let script = """
            keygate lock --all
            keygate setup-host >/dev/null; echo plainsetup=$?
            printf %s before-seal | keygate add -s tpm -a old --accessible when-unlocked-this-device-only; echo addold=$?
            keygate setup-host --tpm --tcti '\(tpm.tcti)'; echo seal=$?
            [ -e '\(hostKeyPath)' ] && echo plain=present || echo plain=gone
            stat -c 'sealedmode=%a' '\(hostKeyPath).tpm'
            keygate lock --all
            printf 'old=%s\\n' "$(keygate get -s tpm -a old)"
            printf %s device-secret | keygate add -s tpm -a a --accessible when-unlocked-this-device-only; echo add=$?
            printf 'v1=%s\\n' "$(keygate get -s tpm -a a)"
            keygate doctor > '\(dir)/doctor-before' 2>&1
            keygate lock --all
            '\(dir)/reset-tpm'; echo reset=$?
            keygate get -s tpm -a a 2> '\(dir)/get-after'; echo after=$?
            keygate get -s tpm -a old 2>/dev/null; echo oldafter=$?
            keygate doctor > '\(dir)/doctor-after' 2>&1; echo doctorafter=$?
            keygate lock --all
            """
        let r = try XCTUnwrap(sandbox).runInSecretSession(script)
        let v = r.values
        let summary = r.summary
        XCTAssertEqual(v["plainsetup"], "0", summary)
        XCTAssertEqual(v["addold"], "0", summary)
        XCTAssertEqual(v["seal"], "0", summary)
        XCTAssertTrue(r.out.contains("sealed the host key to the TPM"), summary)
        XCTAssertEqual(v["plain"], "gone", "no plaintext host key is left once it is sealed: \(summary)")
        XCTAssertEqual(v["sealedmode"], "400", summary)
        XCTAssertEqual(v["old"], "before-seal", "the key moved into the TPM is the same key: \(summary)")
        XCTAssertEqual(v["add"], "0", summary)
        XCTAssertEqual(v["v1"], "device-secret", summary)
        let before = (try? String(contentsOfFile: dir + "/doctor-before", encoding: .utf8)) ?? ""
        XCTAssertTrue(before.contains("OK   host-key: the host key is sealed to the TPM at \(tpm.tcti)"), before)

        XCTAssertEqual(v["reset"], "0", summary)
        let getAfter = (try? String(contentsOfFile: dir + "/get-after", encoding: .utf8)) ?? ""
        XCTAssertEqual(v["after"], "53", "a reset TPM no longer gives the host key (errSecNotAvailable): \(summary) \(getAfter)")
        XCTAssertEqual(v["oldafter"], "53", summary)
        XCTAssertTrue(getAfter.contains("reset") && getAfter.contains("setup-host --tpm --rotate"),
                      "says what happened and what to do: \(getAfter)")
        let after = (try? String(contentsOfFile: dir + "/doctor-after", encoding: .utf8)) ?? ""
        XCTAssertEqual(v["doctorafter"], "53", after)
        let line = after.split(separator: "\n").first { $0.hasPrefix("FAIL host-key:") }.map(String.init) ?? ""
        XCTAssertTrue(line.contains("no longer opens") && line.contains("reset"), after)
        XCTAssertTrue(after.contains("-> sudo keygate setup-host --tpm --rotate"), after)
    }

    func test_setupHostTPM_whereNoTPMAnswers_exits53_andChangesNothing() throws {
        let port = try SoftwareTPM.freePortPair()
        let env = environment
        let keygate = PackagePaths.keygateBinary
        let plain = try Subprocess.run([keygate, "setup-host"], environment: env, timeout: 30)
        XCTAssertEqual(plain.status, 0, plain.err)
        let keyBefore = try Data(contentsOf: URL(fileURLWithPath: hostKeyPath))

        let r = try Subprocess.run([keygate, "setup-host", "--tpm", "--tcti", "swtpm:host=127.0.0.1,port=\(port)"],
                                   environment: env, timeout: 60)
        XCTAssertEqual(r.status, 53, r.out + r.err)
        XCTAssertTrue(r.err.contains("no TPM answers at swtpm:host=127.0.0.1,port=\(port)"), r.err)
        XCTAssertTrue(r.err.contains("plain `sudo keygate setup-host`"), "says what to do instead: \(r.err)")
        XCTAssertFalse(r.err.contains("ERROR:"), "tpm2-tss's own log lines stay quiet: \(r.err)")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: hostKeyPath)), keyBefore, "the file key is kept as it was")
        XCTAssertFalse(FileManager.default.fileExists(atPath: hostKeyPath + ".tpm"), "no sealed file was written")

        // The default TCTI, where this host has no /dev/tpmrm0, fails the same way (and plain setup-host still works).
        if !FileManager.default.fileExists(atPath: "/dev/tpmrm0") {
            let d = try Subprocess.run([keygate, "setup-host", "--tpm"], environment: env, timeout: 30)
            XCTAssertEqual(d.status, 53, d.err)
            XCTAssertTrue(d.err.contains("no TPM answers at device:/dev/tpmrm0"), d.err)
            let doctor = try Subprocess.run([keygate, "doctor"], environment: env, timeout: 60)
            XCTAssertTrue(doctor.out.contains("not sealed to a TPM; no TPM"), doctor.out)
            XCTAssertTrue(doctor.out.contains("-> no TPM: the host key is a root-only file; a copied disk carries it"), doctor.out)
        }
    }

    func test_rotate_ofASealedKey_keepsItSealed_withNewBytes() throws {
        let tpm = try SoftwareTPM(stateFolder: dir + "/tpm-state", pidFile: dir + "/swtpm.pid")
        self.tpm = tpm
        let env = environment
        let keygate = PackagePaths.keygateBinary
        let sealed = try Subprocess.run([keygate, "setup-host", "--tpm", "--tcti", tpm.tcti], environment: env, timeout: 60)
        XCTAssertEqual(sealed.status, 0, sealed.err)
        XCTAssertTrue(sealed.out.contains("created \(hostKeyPath).tpm (sealed to the TPM)"), sealed.out)
        let first = try Data(contentsOf: URL(fileURLWithPath: hostKeyPath + ".tpm"))
        let again = try Subprocess.run([keygate, "setup-host"], environment: env, timeout: 60)
        XCTAssertEqual(again.status, 0, again.err)
        XCTAssertTrue(again.out.contains("already present: \(hostKeyPath).tpm (sealed to the TPM)"), again.out)
        XCTAssertFalse(FileManager.default.fileExists(atPath: hostKeyPath), "plain setup-host makes no file key beside a sealed one")

        let rotated = try Subprocess.run([keygate, "setup-host", "--rotate"], environment: env, timeout: 60)
        XCTAssertEqual(rotated.status, 0, rotated.err)
        XCTAssertTrue(rotated.err.contains("invalidated"), rotated.err)
        let second = try Data(contentsOf: URL(fileURLWithPath: hostKeyPath + ".tpm"))
        XCTAssertNotEqual(first, second)
        XCTAssertFalse(FileManager.default.fileExists(atPath: hostKeyPath), "still no plaintext key after a rotation")
        let usage = try Subprocess.run([keygate, "setup-host", "--tcti", tpm.tcti], environment: env, timeout: 30)
        XCTAssertEqual(usage.status, 2, "--tcti without --tpm is a usage error: \(usage.err)")
    }
}

/// A swtpm TPM2 on two free local TCP ports (server P, control P+1), state in a folder. Started as a
/// daemon with a pid file, so a shell script can reset it; stop() ends it by that pid.
private final class SoftwareTPM {
    static let binary = "/usr/bin/swtpm"
    let port: Int
    let stateFolder: String
    let pidFile: String
    var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    init(stateFolder: String, pidFile: String) throws {
        self.stateFolder = stateFolder
        self.pidFile = pidFile
        port = try SoftwareTPM.freePortPair()
        let r = try Subprocess.run(["bash", "-c", startCommand()], timeout: 30)
        guard r.status == 0 else { throw SoftwareTPMFailure("swtpm did not start: \(r.out) \(r.err)") }
    }

    /// Makes the state folder, starts swtpm in the background and waits until its port accepts. The daemon
    /// gets no descriptor but /dev/null: Foundation's Process watches a socket its child inherits, and a
    /// daemon holding it would make the caller wait for ever.
    private func startCommand() -> String {
        """
        set -e
        mkdir -p '\(stateFolder)'
        (
          for fd in /proc/$BASHPID/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] 2>/dev/null && eval "exec $n>&-"; done
          exec \(SoftwareTPM.binary) socket --tpm2 --daemon --pid file='\(pidFile)' \
            --server type=tcp,port=\(port),bindaddr=127.0.0.1 --ctrl type=tcp,port=\(port + 1),bindaddr=127.0.0.1 \
            --tpmstate dir='\(stateFolder)' --flags not-need-init,startup-clear </dev/null >/dev/null 2>&1
        )
        for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/\(port)) 2>/dev/null && exit 0; sleep 0.05; done
        echo "swtpm never listened on \(port)" >&2; exit 1
        """
    }

    /// Stops this swtpm, wipes its state (new seeds, as TPM2_Clear would give) and starts a fresh one on
    /// the same ports.
    func resetScript() -> String {
        "#!/bin/bash\n" + stopCommand() + "\nrm -rf '\(stateFolder)'\n" + startCommand() + "\n"
    }

    private func stopCommand() -> String {
        """
        pid=$(cat '\(pidFile)' 2>/dev/null) || true
        if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done; fi
        rm -f '\(pidFile)'
        """
    }

    func stop() {
        _ = try? Subprocess.run(["bash", "-c", stopCommand()], timeout: 30)
    }

    /// A port P such that P and P+1 are both free on 127.0.0.1 now.
    static func freePortPair() throws -> Int {
        for _ in 0..<50 {
            let candidate = Int.random(in: 20_000..<60_000)
            if isFree(candidate), isFree(candidate + 1) { return candidate }
        }
        throw SoftwareTPMFailure("no two free adjacent TCP ports on 127.0.0.1")
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

private struct SoftwareTPMFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
