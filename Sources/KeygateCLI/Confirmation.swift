// Asks a person to confirm before a command loses data (`keygate passwd --recovery`
// invalidating items), as apt asks before it removes packages: the question on the
// controlling terminal, "y" or "yes" to go on. `--yes` answers for scripts. With no
// terminal and no --yes it refuses (36) and says to pass --yes: nothing is lost by a
// script that did not mean it. Reads /dev/tty through SafeFile and Descriptor.
import Keygate

enum Confirmation {
    static let yes = OptionSpec.flag("-y", "--yes", help: "Go ahead without asking (for scripts): what would be lost is lost.")

    /// Returns when the person (or --yes) agreed; throws userCanceled (128) on anything but
    /// yes, interactionNotAllowed (36) with no terminal to ask on.
    static func ask(_ what: String, assumeYes: Bool) throws {
        if assumeYes { return }
        let fd = Terminal.isTerminal(0) ? SafeFile.open("/dev/tty", .readWrite | .noControllingTerminal, links: .follow) : -1
        guard fd >= 0 else {
            throw KeychainError(.interactionNotAllowed, "\(what), and there is no terminal to ask you on: pass --yes to go ahead")
        }
        defer { Descriptor.close(fd) }
        Descriptor.write("\(what). Continue? [y/N] ", to: fd)
        var answer: [UInt8] = []
        var byte: UInt8 = 0
        while answer.count < 16 {
            let n = Descriptor.read(fd, into: &byte, count: 1)
            if n <= 0 || byte == 0x0A || byte == 0x0D { break }
            answer.append(byte)
        }
        let text = String(decoding: answer.filter { $0 != 0x20 && $0 != 0x09 }, as: UTF8.self).lowercased()
        guard text == "y" || text == "yes" else {
            throw KeychainError(.userCanceled, "canceled: nothing was changed")
        }
    }

}
