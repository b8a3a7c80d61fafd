// Fuzz harness for the policy parser (Sources/Keygate/Policy): any bytes as a policy
// file. Invariants: no crash or hang (libFuzzer's -timeout), every error points inside
// the text, at most maximumErrors + 1 errors, parsing is deterministic, and a file that
// parses cleanly gives, in every layer, a decision whose access control passes Apple's
// validation. The first line is also tried as a glob against the second (linear time).
// Delegates everything to PolicyParser, PolicySet/PolicyMerge and PolicyGlob.
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPolicyParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput.all(data, size)
    let parsed = PolicyParser.parse(input, file: "fuzz.policy")
    FuzzStats.record(refused: !parsed.errors.isEmpty)

    let lines = input.split(separator: 0x0A, omittingEmptySubsequences: false)
    for error in parsed.errors {
        require(!error.message.isEmpty, "an error without a message")
        if input.count > PolicyParser.maximumBytes { continue }   // the one "too large" error at 1:1
        require(error.line >= 1 && error.line <= max(lines.count, 1), "error line \(error.line) outside the text: \(error)")
        let lineLength = lines.isEmpty ? 0 : lines[error.line - 1].count
        require(error.column >= 1 && error.column <= lineLength + 1, "error column outside its line: \(error)")
    }
    require(parsed.errors.count <= PolicyParser.maximumErrors + 1, "\(parsed.errors.count) errors, more than the cap")
    if input.count < 512 {
        require(PolicyParser.parse(input, file: "fuzz.policy").errors == parsed.errors, "parsing is not deterministic")
    }

    if parsed.errors.isEmpty {
        // One layer per input (chosen by its length) keeps each execution cheap.
        for layer in [[PolicyLayer.vendor, .admin, .user][input.count % 3]] {
            let set = PolicySet(loaded: [LoadedPolicyFile(path: "fuzz.policy", layer: layer, state: .parsed(parsed))])
            for (service, account) in [("vpn", "alice"), ("é\u{1F511}", "*?[")] {
                do {
                    let decision = try set.decision(service: service, account: account)
                    for access in [decision.defaultAccess, decision.minimumAccess].compactMap({ $0 }) {
                        do { try access.validate() } catch { require(false, "a clean policy gave invalid access control: \(error)") }
                    }
                    require(decision.policy.maxTries >= 1, "max-tries below 1")
                } catch {
                    require(false, "a clean policy file made decision() throw: \(error)")
                }
            }
        }
    }

    // Globs: the first line as a pattern, the second as the name it is matched against.
    if let newline = input.firstIndex(of: 0x0A) {
        let pattern = String(decoding: input[..<newline], as: UTF8.self)
        let rest = input[(newline + 1)...]
        let name = String(decoding: rest.prefix { $0 != 0x0A }, as: UTF8.self)
        let glob = PolicyGlob(pattern)
        _ = glob.matches(name)
        _ = glob.specificity
        if !pattern.contains(where: { "*?[\\".contains($0) }) {
            require(glob.matchesEverything || glob.matches(pattern), "a glob without wildcards does not match itself: \(pattern)")
        }
    }
    return 0
}
