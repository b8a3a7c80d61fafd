// The one layout the embedded store keeps item attributes in: a row per (item, name, value),
// in `attributes` for Keygate's own items and in `secret_service_attributes` for the items
// Secret Service clients make. The table's definition, reading the items a query found with
// their attributes, and replacing one item's attributes are the same statements on either
// table, so they are written once here.
//
// Delegates: the statements to SQLiteDatabase; the caller picks how a statement is made (a new
// one, or one the kept connection holds) and runs these inside its own transaction.

struct AttributeTable: Sendable {
    let name: String
    /// The table of the items whose attributes these are.
    let itemsTable: String
    /// The statement `attributes(of:reading:)` runs: made once, then run again for each item.
    let selectSQL: String

    init(name: String, itemsTable: String) {
        self.name = name
        self.itemsTable = itemsTable
        selectSQL = "SELECT name, value FROM \(name) WHERE item = ?1"
    }

    static let keygate = AttributeTable(name: "attributes", itemsTable: "items")
    static let secretService = AttributeTable(name: "secret_service_attributes", itemsTable: "secret_service_items")

    /// The table and its index for matching by attribute, made with the schema step of its items.
    var createSQL: String {
        """
        CREATE TABLE IF NOT EXISTS \(name) (
            item INTEGER NOT NULL REFERENCES \(itemsTable) (id) ON DELETE CASCADE,
            name TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (item, name)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS \(name)_match ON \(name) (name, value, item);
        """
    }

    /// The items `select` gives (its first column an item's id), each with its attributes read
    /// with `attributesOf` (a statement of `selectSQL`; nil reads none, for a caller that answers
    /// without them), made into a value by `make`; nil leaves one out.
    static func items<Row>(_ select: SQLiteStatement, attributesOf: SQLiteStatement?,
                           _ make: (_ id: Int64, _ attributes: [String: String]) throws -> Row?) throws -> [Row] {
        var rows: [Row] = []
        while try select.step() {
            let id = select.int(0)
            let attributes = try attributesOf.map { try Self.attributes(of: id, reading: $0) } ?? [:]
            if let row = try make(id, attributes) { rows.append(row) }
        }
        return rows
    }

    /// Item `id`'s attributes, read with `select` (a statement of `selectSQL`).
    static func attributes(of id: Int64, reading select: SQLiteStatement) throws -> [String: String] {
        select.reset()
        try select.bind(1, int: id)
        var entries: [String: String] = [:]
        while try select.step() { entries[select.text(0)] = select.text(1) }
        return entries
    }

    /// Replaces item `id`'s attributes with `attributes`, in name order, through statements
    /// `prepare` makes.
    func replace(_ id: Int64, with attributes: [String: String],
                 prepare: (String) throws -> SQLiteStatement) throws {
        let clear = try prepare("DELETE FROM \(name) WHERE item = ?1")
        try clear.bind(1, int: id)
        try clear.run()
        let add = try prepare("INSERT INTO \(name) (item, name, value) VALUES (?1, ?2, ?3)")
        for (attribute, value) in attributes.sorted(by: { $0.key < $1.key }) {
            add.reset()
            try add.bind(1, int: id)
            try add.bind(2, text: attribute)
            try add.bind(3, text: value)
            try add.run()
        }
    }
}
