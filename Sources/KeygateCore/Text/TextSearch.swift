// Substring search for the programs that run as root at login and for gated reads, which do
// not link _StringProcessing (the standard library's `contains(_:)` and `firstRange(of:)` on
// strings live there, with the Regex metadata that every start of a program would relocate;
// docs/DECISIONS.md). Pure code.

extension StringProtocol {
    /// True when `text` occurs in this string, compared as UTF-8 bytes.
    package func containsText(_ text: some StringProtocol) -> Bool {
        firstByteOffset(of: text) != nil
    }

    /// The UTF-8 offset where `text` first occurs, or nil.
    package func firstByteOffset(of text: some StringProtocol) -> Int? {
        let haystack = Array(utf8), needle = Array(text.utf8)
        guard needle.count <= haystack.count else { return nil }
        if needle.isEmpty { return 0 }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return start }
        }
        return nil
    }
}
