// A property test of the policy parser and merge: at least 100,000 inputs, random ones
// built from policy tokens and mutations of the committed corpus (Tests/KeygateTests/
// PolicyCorpus/), none of which may crash or hang. For each input: every error points
// inside the text (line and column from 1, within the line), parsing is deterministic,
// and a file without errors yields a decision whose access control passes Apple's
// validation. Seeded, so a failure can be replayed (KEYGATE_FUZZ_SEED).
import Foundation
import KeygateTestSupport
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class PolicyFuzzTests: XCTestCase {
    static let iterations = 100_000

    /// The module's SplitMix64: small, fast, and the same on every machine, so a seed replays.
    typealias Generator = SplitMix

    static let tokens: [String] = [
        "[", "]", "[default]", "[service \"", "[account \"", "\"", "\" account \"", "service", "account", "default",
        "=", " = ", " ", "\t", "\n", "\r\n", "#", ";", "*", "?", "vpn*", "a?c", "é", "\u{1F511}",
        "access", "accessible", "reuse-duration", "reuse-scope", "pam-service", "prompt", "max-tries", "lockout",
        "lock-after", "allow-non-interactive", "user-presence", "device-passcode", "biometry-any", "current-set",
        ",", " and", " or", ";and", "none", "when-unlocked", "after-first-unlock-this-device-only", "tty", "ppid",
        "global", "session", "yes", "no", "true", "0", "1", "300", "5m", "1h", "99999999999999999999", "-1", "keygate",
    ]

    func test_parserAndMerge_survive100kRandomAndMutatedInputs() throws {
        let folder = PackagePaths.root + "/Tests/KeygateTests/PolicyCorpus"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".policy") }.sorted()
        let corpus = try names.map { [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0))) }
        XCTAssertGreaterThanOrEqual(corpus.count, 8, "the corpus is committed with the test")
        let seed = ProcessInfo.processInfo.environment["KEYGATE_FUZZ_SEED"].flatMap(UInt64.init) ?? 0x6B65_7967_6174_6521
        var rng = Generator(seed: seed)
        let clock = ContinuousClock()
        let start = clock.now
        var clean = 0, withErrors = 0
        for iteration in 0..<Self.iterations {
            let input: [UInt8]
            switch iteration % 3 {
            case 0: input = Self.randomTokens(&rng)
            case 1: input = Self.mutate(corpus[Int(rng.next() % UInt64(corpus.count))], corpus, &rng)
            default: input = Self.randomBytes(&rng)
            }
            let parsed = PolicyParser.parse(input, file: "f")
            try Self.checkInvariants(parsed, input, iteration: iteration, seed: seed)
            if parsed.errors.isEmpty {
                clean += 1
                if iteration % 16 == 1 { try Self.checkDecision(parsed, &rng) }
            } else {
                withErrors += 1
            }
            if iteration % 1000 == 0, clock.now - start > .seconds(120) {
                XCTFail("the fuzz run is far too slow (\(iteration) inputs in 120 s): something hangs")
                return
            }
        }
        XCTAssertGreaterThan(clean, 1000, "enough inputs parse cleanly to exercise the merge")
        XCTAssertGreaterThan(withErrors, 1000, "enough inputs are malformed to exercise the errors")
    }

    static func checkInvariants(_ parsed: ParsedPolicy, _ input: [UInt8], iteration: Int, seed: UInt64) throws {
        let lines = input.split(separator: 0x0A, omittingEmptySubsequences: false)
        for error in parsed.errors {
            guard error.line >= 1, error.line <= max(lines.count, 1), error.column >= 1,
                  error.column <= (lines.isEmpty ? 1 : lines[error.line - 1].count + 1),
                  !error.message.isEmpty else {
                XCTFail("error outside the text at iteration \(iteration) (seed \(seed)): \(error) for \(input)")
                return
            }
        }
        XCTAssertLessThanOrEqual(parsed.errors.count, PolicyParser.maximumErrors + 1)
        if input.count < 64 {
            XCTAssertEqual(PolicyParser.parse(input, file: "f").errors, parsed.errors, "deterministic")
        }
    }

    static func checkDecision(_ parsed: ParsedPolicy, _ rng: inout Generator) throws {
        let layers: [PolicyLayer] = [.vendor, .admin, .user]
        let set = PolicySet(loaded: [LoadedPolicyFile(path: "f", layer: layers[Int(rng.next() % 3)], state: .parsed(parsed))])
        for (service, account) in [("vpn", "alice"), ("", ""), ("ssh", "deploy@prod1"), ("ci-x", "é")] {
            let decision = try set.decision(service: service, account: account)
            for access in [decision.defaultAccess, decision.minimumAccess].compactMap({ $0 }) { XCTAssertNoThrow(try access.validate()) }
            XCTAssertGreaterThanOrEqual(decision.policy.maxTries, 1)
        }
    }

    static func randomTokens(_ rng: inout Generator) -> [UInt8] {
        var out: [UInt8] = []
        let count = Int(rng.next() % 40)
        for _ in 0..<count { out += Array(tokens[Int(rng.next() % UInt64(tokens.count))].utf8) }
        return out
    }

    static func randomBytes(_ rng: inout Generator) -> [UInt8] {
        let count = Int(rng.next() % 200)
        return (0..<count).map { _ in
            // Mostly printable ASCII and newlines, sometimes anything.
            let r = rng.next()
            if r % 10 == 0 { return UInt8(truncatingIfNeeded: r >> 8) }
            if r % 10 == 1 { return 0x0A }
            return UInt8(0x20 + (r >> 8) % 95)
        }
    }

    static func mutate(_ seed: [UInt8], _ corpus: [[UInt8]], _ rng: inout Generator) -> [UInt8] {
        var bytes = seed
        let rounds = 1 + Int(rng.next() % 4)
        for _ in 0..<rounds {
            let at = bytes.isEmpty ? 0 : Int(rng.next() % UInt64(bytes.count))
            switch rng.next() % 7 {
            case 0 where !bytes.isEmpty:   // flip a bit
                bytes[at] ^= UInt8(1 << (rng.next() % 8))
            case 1 where !bytes.isEmpty:   // delete a range
                let length = min(bytes.count - at, Int(rng.next() % 16) + 1)
                bytes.removeSubrange(at..<(at + length))
            case 2:                        // insert a token
                bytes.insert(contentsOf: Array(tokens[Int(rng.next() % UInt64(tokens.count))].utf8), at: at)
            case 3 where !bytes.isEmpty:   // duplicate a range
                let length = min(bytes.count - at, Int(rng.next() % 40) + 1)
                bytes.insert(contentsOf: bytes[at..<(at + length)], at: at)
            case 4:                        // splice another corpus file
                let other = corpus[Int(rng.next() % UInt64(corpus.count))]
                let from = other.isEmpty ? 0 : Int(rng.next() % UInt64(other.count))
                bytes = Array(bytes[..<at]) + Array(other[from...])
            case 5 where !bytes.isEmpty:   // a random byte
                bytes[at] = UInt8(truncatingIfNeeded: rng.next())
            default:                       // truncate
                bytes = Array(bytes[..<at])
            }
        }
        return bytes
    }
}

extension SplitMix: RandomNumberGenerator {}
