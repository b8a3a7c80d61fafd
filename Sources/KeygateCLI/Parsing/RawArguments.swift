// Turns the raw argv bytes into the Strings the parser reads, refusing an argument
// before "--" that is not valid UTF-8: Swift would repair it to U+FFFD, so "\xff" and
// "\xfe" would name the same item. Arguments after "--" (a command for `keygate exec`)
// are the child's business: they are checked for nothing, and `keygate exec` hands
// them on as the very bytes it was given. Delegates the run to KeygateMain.

extension KeygateMain {
    /// Runs the CLI with the raw bytes of argv (without the program name).
    public static func run(rawArguments: [[UInt8]], programName: String = "keygate") -> Int32 {
        switch RawArguments.decode(rawArguments) {
        case .success(let arguments):
            return run(arguments, raw: rawArguments, programName: programName)
        case .failure(let error):
            Console.err("keygate: \(error.message)\n\(HelpFormatter.usageLine(for: topLevel, programName: programName))\n")
            return 2
        }
    }
}

enum RawArguments {
    struct InvalidText: Error, Equatable {
        /// 1-based position of the argument after the program name.
        let position: Int
        var message: String {
            """
                argument \(position) is not valid UTF-8 text: service, account, label and option values must be UTF-8 (check the \
                terminal's locale, e.g. LANG=C.UTF-8)
                """
        }
    }

    static func decode(_ raw: [[UInt8]]) -> Result<[String], InvalidText> {
        var out: [String] = []
        var afterDoubleDash = false
        for (index, bytes) in raw.enumerated() {
            if !afterDoubleDash, String(validating: bytes, as: UTF8.self) == nil {
                return .failure(InvalidText(position: index + 1))
            }
            let text = String(decoding: bytes, as: UTF8.self)
            if text == "--" { afterDoubleDash = true }
            out.append(text)
        }
        return .success(out)
    }
}
