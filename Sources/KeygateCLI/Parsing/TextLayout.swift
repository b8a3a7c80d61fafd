// Word wrapping and two-column rows for help text, at a fixed width, with no
// trailing spaces. Used by HelpFormatter; knows nothing about commands.

enum TextLayout {
    /// Lines are wrapped to at most this many characters (a word longer than
    /// a line is left whole on its own line).
    static let width = 80

    /// Wraps `units` (words, or unbreakable usage elements) into lines. The
    /// first line starts with `firstPrefix`; later lines with `indent` spaces.
    static func wrap(_ units: [String], firstPrefix: String, indent: Int, width: Int = width) -> [String] {
        var lines: [String] = []
        var line = firstPrefix
        var lineHasUnit = false
        let indentation = String(repeating: " ", count: indent)
        for unit in units {
            if !lineHasUnit {
                line += unit
                lineHasUnit = true
            } else if line.count + 1 + unit.count <= width {
                line += " " + unit
            } else {
                lines.append(line)
                line = indentation + unit
            }
        }
        lines.append(lineHasUnit ? line : trimmingTrailingSpaces(line))
        return lines
    }

    /// Wraps text whose paragraphs are separated by newlines. An empty line in
    /// the text stays an empty line.
    static func wrapText(_ text: String, firstPrefix: String, indent: Int, width: Int = width) -> [String] {
        var lines: [String] = []
        var prefix = firstPrefix
        let indentation = String(repeating: " ", count: indent)
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let words = paragraph.split(separator: " ").map(String.init)
            if words.isEmpty {
                lines.append(trimmingTrailingSpaces(prefix))
            } else {
                lines += wrap(words, firstPrefix: prefix, indent: indent, width: width)
            }
            prefix = indentation
        }
        return lines
    }

    /// "  label   help..." with the help starting at `column`; a label too long
    /// for the column gets a line of its own and the help starts below it.
    static func row(label: String, help: String, column: Int, width: Int = width) -> [String] {
        let head = "  " + label
        if help.isEmpty { return [head] }
        if head.count + 1 <= column {
            let padded = head + String(repeating: " ", count: column - head.count)
            return wrapText(help, firstPrefix: padded, indent: column, width: width)
        }
        let indentation = String(repeating: " ", count: column)
        return [head] + wrapText(help, firstPrefix: indentation, indent: column, width: width)
    }

    static func trimmingTrailingSpaces(_ line: String) -> String {
        var result = line
        while result.last == " " { result.removeLast() }
        return result
    }
}
