// Races through the real CLI: StressBudget.processes `keygate` writers (8 under
// `make stress`) make StressBudget.operations random add, update, get and delete calls
// each on 20 keys. Every value names its writer, its sequence number and its key, so a
// read can be checked against "some writer wrote this, to this key". Then many
// processes unlock at once, and no key lands in the user keyring without its timeout.
import Foundation
import KeygateTestSupport
import XCTest

final class ConcurrencyTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.longRun
    func test_racingProcesses_randomAddUpdateGetDelete_everyReadIsAWrittenValue_noCorruptItem() throws {
        let h = try CLIUserHarness()
        let processes = StressBudget.processes, operations = StressBudget.operations
        let r = try h.run(#"""
            keygate init >/dev/null 2>&1 || { echo setup=init; exit 1; }
            mkdir -p "$HOME/race"
            worker() {
                id=$1; s=0
                for n in $(seq 1 OPS); do
                    k=k$((RANDOM % 20))
                    case $((RANDOM % 4)) in
                    0) s=$((s + 1)); v="w$id.s$s.$k"; printf %s "$v" | keygate add -s race -a $k 2>>"$HOME/race/err$id"; echo "A $k $v $?" ;;
                    1) s=$((s + 1)); v="w$id.s$s.$k"; printf %s "$v" | keygate add -U -s race -a $k 2>>"$HOME/race/err$id"; echo "U $k $v $?" ;;
                    2) v=$(keygate get -s race -a $k 2>>"$HOME/race/err$id"); st=$?; echo "G $k ${v:--} $st" ;;
                    3) keygate delete -s race -a $k 2>>"$HOME/race/err$id"; echo "D $k - $?" ;;
                    esac
                done > "$HOME/race/log$id"
            }
            for p in $(seq 1 PROCS); do worker $p & done
            wait
            for i in $(seq 0 19); do
                v=$(keygate get -s race -a k$i 2>>"$HOME/race/errF"); st=$?; echo "F k$i ${v:--} $st"
                n=$(keygate list -s race -a k$i --json 2>/dev/null | grep -o '"account"' | wc -l); echo "N k$i $n"
            done > "$HOME/race/final"
            echo done=1
            """#.replacingOccurrences(of: "OPS", with: String(operations)).replacingOccurrences(of: "PROCS", with: String(processes)),
            timeout: Double(120 + processes * operations / 2))
        XCTAssertEqual(r.values["done"], "1", r.summary)
        let folder = h.user.home + "/race/"
        var written: [String: Set<String>] = [:]
        var lines: [[Substring]] = [], workers: [Int] = []
        // gnome-keyring 42.1 (Debian 12) now and then crashes under this load (a segfault in the
        // kernel log), and the bus starts it again. A read the crash cuts off runs again; a write
        // exits 53 saying the Secret Service quit, as Keygate promises for a dying daemon
        // (DyingDependencyTests): such a 53 is counted, one for each of its worker's messages;
        // any other 53 fails.
        var crashExitsLeft: [Int] = []   // by worker
        for p in 1...processes {
            let text = try String(contentsOfFile: folder + "log\(p)", encoding: .utf8)
            let logged = text.split(separator: "\n").map { $0.split(separator: " ") }
            lines += logged
            workers += Array(repeating: p - 1, count: logged.count)
            let errors = (try? String(contentsOfFile: folder + "err\(p)", encoding: .utf8)) ?? ""
            crashExitsLeft.append(errors.components(separatedBy: "(the Secret Service quit while").count - 1)
        }
        // Every attempted write counts as "written": a writer that fails or dies may still have stored.
        for l in lines where l.count == 4 && (l[0] == "A" || l[0] == "U") { written[String(l[1]), default: []].insert(String(l[2])) }
        // An item another process deletes between a search and the next call is gone (44 for a
        // read, counted as deleted, re-created by an update): never an error.
        let allowed: [Substring: Set<Substring>] = ["A": ["0", "45"], "U": ["0"], "G": ["0", "44"], "D": ["0", "44"]]
        var badStatus: [String] = [], badReads: [String] = [], providerCrashExits = 0
        for (l, worker) in zip(lines, workers) {
            guard l.count == 4 else { badStatus.append(l.joined(separator: " ")); continue }
            if l[3] == "53", crashExitsLeft[worker] > 0 {
                crashExitsLeft[worker] -= 1
                providerCrashExits += 1
                continue
            }
            if !(allowed[l[0]]?.contains(l[3]) ?? false) { badStatus.append(l.joined(separator: " ")) }
            if l[0] == "G", l[3] == "0", !(written[String(l[1])]?.contains(String(l[2])) ?? false) { badReads.append(l.joined(separator: " ")) }
        }
        let final = try String(contentsOfFile: folder + "final", encoding: .utf8).split(separator: "\n").map { $0.split(separator: " ") }
        var duplicates: [String] = []
        for l in final where l.count >= 3 {
            if l[0] == "F" {
                if !(l[3] == "44" || (l[3] == "0" && (written[String(l[1])]?.contains(String(l[2])) ?? false))) {
                    badReads.append("final " + l.joined(separator: " "))
                }
            } else if l[0] == "N", l[2] != "0", l[2] != "1" {
                duplicates.append(l.joined(separator: " "))
            }
        }
        // The messages of the allowed statuses (44, 45) are many; the rest name what went wrong.
        let routine = ["no item for", "already exists", "nothing was deleted"]
        let errors = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.filter { $0.hasPrefix("err") }
            .compactMap { try? String(contentsOfFile: folder + $0, encoding: .utf8) }.joined()
            .split(separator: "\n").filter { line in !routine.contains { line.contains($0) } }.joined(separator: "\n") ?? ""
        XCTAssertEqual(lines.count, processes * operations, "every operation finished and logged")
        XCTAssertEqual(badStatus, [], "unexpected exit statuses; stderr:\n\(errors.suffix(3000))")
        XCTAssertEqual(badReads, [], "a read returned a value no writer wrote to that key")
        XCTAssertEqual(duplicates, [], "two items with one identity")
        StressBudget.report("cli race", ["processes": processes, "operations": lines.count,
                                         "badStatus": badStatus.count, "badReads": badReads.count, "duplicates": duplicates.count,
                                         "providerCrashExits": providerCrashExits])
    }

    /// Many `keygate unlock` at once (and gated reads in several reuse scopes): every
    /// key they leave in the user keyring has its timeout, except the after-first-unlock
    /// class keys, which by design last until reboot or `lock --all`.
    func test_concurrentUnlocks_neverCacheAKeyWithoutItsTimeout() throws {
        let h = try CLIUserHarness()
        let n = max(8, StressBudget.processes)
        let r = try h.run(#"""
            printf %s g | keygate add -s t -a g --access user-presence >/dev/null 2>&1 || { echo setup=add; exit 1; }
            for round in 1 2 3; do
                keygate lock --all >/dev/null
                for i in $(seq 1 UNLOCKERS); do keygate unlock >/dev/null 2>&1 & bash -c 'keygate get -s t -a g >/dev/null 2>&1' & done
                wait
            done
            # /proc/keys shows possessor-only keys to a possessor: link @u into a new session keyring.
            keyctl session - sh -c 'keyctl link @u @s >/dev/null; cat /proc/keys' | grep "keygate:" > "$HOME/keys"
            echo listed=$(wc -l < "$HOME/keys")
            """#.replacingOccurrences(of: "UNLOCKERS", with: String(n)), timeout: 300)
        XCTAssertNil(r.values["setup"], r.summary)
        let keys = try String(contentsOfFile: h.user.home + "/keys", encoding: .utf8).split(separator: "\n")
        XCTAssertGreaterThan(keys.count, 1, "the unlocks cached keys: \(r.summary)")
        // /proc/keys columns: serial flags usage expiry perm uid gid type description: ...
        let untimed = keys.filter { line in
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > 8 else { return true }
            let description = columns[8...].joined(separator: " ")
            let byDesign = description.contains(":class.after-first-unlock") || description.contains(":classpair.")
            return columns[3] == "perm" && !byDesign
        }
        XCTAssertEqual(untimed, [], "keys cached without a timeout:\n\(keys.joined(separator: "\n"))")
        XCTAssertTrue(keys.contains { $0.contains(":master") }, keys.joined(separator: "\n"))
        StressBudget.report("concurrent unlocks", ["unlockers": 3 * n, "cachedKeys": keys.count, "untimed": untimed.count])
    }
}
