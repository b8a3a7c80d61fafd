// The text of each ItemField that a query or a change sets (ItemQuery, ItemChanges): one slot
// per field of ItemField's table, in its order. Not a `[ItemField: String]`: the first such
// dictionary a process makes has the Swift runtime look for ItemField's Hashable conformance by
// walking every conformance record in the binary (about 330,000 instructions, once per process:
// a tenth of a CLI read), where an array of optional text needs no conformance at all. Pure code.

public struct ItemFieldTexts: Sendable, Hashable {
    private var slots: [String?]

    /// No field set.
    public init() {
        slots = Array(repeating: nil, count: ItemField.ordered.count)
    }

    /// The field's text; nil when it is not set.
    public subscript(field: ItemField) -> String? {
        get { slots[field.ordinal] }
        set { slots[field.ordinal] = newValue }
    }

    /// The fields that are set, in the table's order.
    public var setFields: [ItemField] {
        ItemField.ordered.filter { slots[$0.ordinal] != nil }
    }

    /// How many fields are set.
    public var count: Int {
        var n = 0
        for slot in slots where slot != nil { n += 1 }
        return n
    }

    public var isEmpty: Bool { count == 0 }
}

extension ItemField {
    /// Every field, in the table's order (`allCases`, made once).
    public static let ordered: [ItemField] = allCases

    /// The field's place in `ordered`.
    public var ordinal: Int {
        switch self {
        case .service: return 0
        case .account: return 1
        case .server: return 2
        case .protocol: return 3
        case .port: return 4
        case .path: return 5
        case .securityDomain: return 6
        case .authenticationType: return 7
        case .synchronizable: return 8
        case .accessGroup: return 9
        case .label: return 10
        case .comment: return 11
        case .description: return 12
        case .generic: return 13
        }
    }
}
