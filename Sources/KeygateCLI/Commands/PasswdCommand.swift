// `keygate passwd`: after the login password changed without Keygate (chpasswd,
// an administrator's reset, another tool), re-wrap the keychain for the current
// password. Asks for the current password through PAM and for the previous one
// (or, with --recovery, the recovery key). Current-set items are invalidated.

import Keygate

enum PasswdCommand: KeygateCommand {
    static let recovery = OptionSpec.flag("--recovery", help: "Use the recovery key instead of the previous password.")

    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Re-wrap the keychain after your login password changed outside Keygate.",
        discussion: """
            Asks for your current password (checked through PAM) and the previous one, then re-wraps the master key for the \
            current password. Items with current-set access are invalidated, as on Apple when the enrolled set changes. With \
            --recovery, the recovery key replaces the previous password. Items with user presence keep working either way: \
            their keys are the gatekeeper's. --recovery asks first only when it would invalidate items that still open \
            (current-set, or sealed by Keygate 1.x and never moved), saying how many (--yes answers for scripts).
            """,
        options: [recovery, Confirmation.yes] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let operations = try context.operations(reason: "re-wrap your keychain for your current password")
        if args.flag(Self.recovery) {
            let lost = try operations.inventory.itemsARecoveryResetInvalidates()
            if lost.userPresence + lost.currentSet > 0 {
                try Confirmation.ask("This invalidates \(count(lost.userPresence, "item")) that Keygate 1.x sealed with user presence "
                                     + "and that were not moved to the gatekeeper yet, and \(count(lost.currentSet, "item")) bound to "
                                     + "your password (current-set): their keys open only with the previous password",
                                     assumeYes: args.flag(Confirmation.yes))
            }
            let key = try context.readRecoveryKey(ifCanceled: "the keychain's password was not changed")
            Console.err(try operations.resetPassword(recoveryKey: key) + "\n")
        } else {
            try operations.changePassword()
            Console.err("The keychain now opens with your current password. Items with current-set access were invalidated.\n")
        }
        return 0
    }

    private static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
