// Substring search for the targets of root's two programs, which do not link _StringProcessing
// (where the standard library's `contains(_:)` and `firstRange(of:)` on strings live, with the
// Regex metadata every start of a program would relocate; docs/DECISIONS.md, "The login helper
// links no Foundation"). Pure code.

extension StringProtocol {
    /// True when `text` occurs in this string, compared as UTF-8 bytes.
    package func containsText(_ text: some StringProtocol) -> Bool {
        let haystack = Array(utf8), needle = Array(text.utf8)
        guard !needle.isEmpty else { return true }
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { start in
            haystack[start..<start + needle.count].elementsEqual(needle)
        }
    }
}
