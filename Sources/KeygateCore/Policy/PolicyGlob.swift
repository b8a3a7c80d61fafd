// The glob a policy section matches a service or account with: `*` is any run of
// characters (also none), `?` is exactly one character, everything else is itself
// (no character classes, no escapes). Matching is linear-time backtracking on
// Unicode scalars, so no pattern can make it slow. Also ranks how specific a glob is.

/// A service or account glob from a section header.
struct PolicyGlob: Sendable, Hashable {
    let pattern: String
    private let scalars: [Unicode.Scalar]

    init(_ pattern: String) {
        self.pattern = pattern
        self.scalars = Array(pattern.unicodeScalars)
    }

    /// "*": matches everything.
    static let any = PolicyGlob("*")

    var wildcardCount: Int { scalars.reduce(0) { $0 + ($1 == "*" || $1 == "?" ? 1 : 0) } }
    var literalCount: Int { scalars.count - wildcardCount }
    var isExact: Bool { wildcardCount == 0 }
    var matchesEverything: Bool { !scalars.isEmpty && scalars.allSatisfy { $0 == "*" } }

    /// How specific the glob is; larger is more specific. Exact text beats any glob; among globs, fewer
    /// wildcards win, then more literal characters; `*` alone comes last. So "vpn" > "vpn-?" > "vpn*" > "v*n*" > "*".
    /// A pattern of only `*` (any text at all) is the least specific, whatever its length.
    var specificity: Specificity {
        Specificity(exact: isExact ? 2 : (matchesEverything ? 0 : 1), fewerWildcards: -wildcardCount, literals: literalCount)
    }

    struct Specificity: Comparable, Sendable {
        var exact: Int
        var fewerWildcards: Int
        var literals: Int

        static func < (a: Specificity, b: Specificity) -> Bool {
            (a.exact, a.fewerWildcards, a.literals) < (b.exact, b.fewerWildcards, b.literals)
        }
    }

    func matches(_ text: String) -> Bool {
        let input = Array(text.unicodeScalars)
        var p = 0, t = 0
        var star: Int? = nil   // position in the pattern just after the last `*`
        var resume = 0         // where in the text that `*` would next try
        while t < input.count {
            if p < scalars.count, scalars[p] == "?" || (scalars[p] != "*" && scalars[p] == input[t]) {
                p += 1
                t += 1
            } else if p < scalars.count, scalars[p] == "*" {
                star = p + 1
                resume = t
                p += 1
            } else if let afterStar = star {
                resume += 1
                t = resume
                p = afterStar
            } else {
                return false
            }
        }
        while p < scalars.count, scalars[p] == "*" { p += 1 }
        return p == scalars.count
    }
}
