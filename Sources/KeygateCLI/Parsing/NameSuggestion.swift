// Finds the known option name closest to a mistyped one, for "did you mean"
// hints, with the optimal-string-alignment edit distance (Levenshtein plus
// adjacent transpositions).

enum NameSuggestion {
    /// The closest of `candidates` to `typed`, or nil when none is close enough.
    /// A short name ("-u") is matched only by case ("-U"); a longer one by an
    /// edit distance of at most 2 that is also at most a third of the candidate.
    static func closest(to typed: String, among candidates: [String]) -> String? {
        if typed.count <= 2 {
            return candidates.first { $0 != typed && $0.count == typed.count && $0.lowercased() == typed.lowercased() }
        }
        var best: (name: String, distance: Int)? = nil
        for candidate in candidates where candidate.count > 2 {
            let d = distance(typed, candidate)
            let core = candidate.drop { $0 == "-" }.count
            guard d <= 2, d * 3 <= max(core, 3) else { continue }
            if best.map({ d < $0.distance }) ?? true {
                best = (candidate, d)
            }
        }
        return best?.name
    }

    /// Optimal string alignment distance between `a` and `b`.
    static func distance(_ a: String, _ b: String) -> Int {
        let s = Array(a), t = Array(b)
        if s.isEmpty { return t.count }
        if t.isEmpty { return s.count }
        // rows[i][j]: distance between s[..<i] and t[..<j].
        var rows = [[Int]](repeating: [Int](repeating: 0, count: t.count + 1), count: s.count + 1)
        for i in 0...s.count { rows[i][0] = i }
        for j in 0...t.count { rows[0][j] = j }
        for i in 1...s.count {
            for j in 1...t.count {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                var d = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    d = min(d, rows[i - 2][j - 2] + 1)
                }
                rows[i][j] = d
            }
        }
        return rows[s.count][t.count]
    }
}
