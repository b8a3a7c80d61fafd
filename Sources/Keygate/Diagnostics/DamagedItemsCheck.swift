// Doctor check: items whose secret came back empty from the store (damaged: a provider killed
// during or soon after a write; ItemInventory). Reads every Keygate item's sealed
// blob where no provider window is needed (never a secret: blobs stay sealed, nothing is
// opened), and says which items are damaged, in the words `get`, `exists` and `list` use. A
// line only when there is something to do: a store that cannot be read is the other checks'.

enum DamagedItemsCheck {
    static let name = "items"

    /// A WARN naming the damaged items, or nil when there are none (or the store cannot be read).
    static func run(_ operations: KeychainOperations) -> DiagnosticResult? {
        guard let damaged = try? operations.inventory.damagedItems(), !damaged.isEmpty else { return nil }
        let names = damaged.map(\.displayName)
        let shown = names.prefix(5).joined(separator: ", ") + (names.count > 5 ? " and \(names.count - 5) more" : "")
        return DiagnosticResult(name, .warn, "\(damaged.count) damaged item\(damaged.count == 1 ? "" : "s") (\(shown)): its "
                                + "secret came back empty from the store (a Secret Service stopped during or soon after writing it)",
                                advice: "add each again (keygate add -U -s SERVICE -a ACCOUNT), which replaces it, or delete it "
                                    + "(keygate delete)")
    }
}
