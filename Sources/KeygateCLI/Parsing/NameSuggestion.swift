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
        let typedCount = typed.count
        for candidate in candidates where candidate.count > 2 {
            // The distance is at least the difference in length: a long token (the fuzzer sends 1 KiB
            // ones) is never compared cell by cell with names it cannot be close to.
            guard abs(candidate.count - typedCount) <= 2 else { continue }
            let d = distance(typed, candidate)
            let core = candidate.drop { $0 == "-" }.count
            guard d <= 2, d * 3 <= max(core, 3) else { continue }
            if best.map({ d < $0.distance }) ?? true {
                best = (candidate, d)
            }
        }
        return best?.name
    }

    /// Optimal string alignment distance between `a` and `b`, kept in three rolling rows
    /// (the transposition looks two rows back).
    static func distance(_ a: String, _ b: String) -> Int {
        let s = Array(a), t = Array(b)
        if s.isEmpty { return t.count }
        if t.isEmpty { return s.count }
        // previous2, previous, current: rows i-2, i-1 and i of the table, where row i
        // column j is the distance between s[..<i] and t[..<j].
        var previous2 = [Int](repeating: 0, count: t.count + 1)
        var previous = Array(0...t.count)
        var current = [Int](repeating: 0, count: t.count + 1)
        for i in 1...s.count {
            current[0] = i
            for j in 1...t.count {
                let cost = s[i - 1] == t[j - 1] ? 0 : 1
                var d = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                    d = min(d, previous2[j - 2] + 1)
                }
                current[j] = d
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[t.count]
    }
}
