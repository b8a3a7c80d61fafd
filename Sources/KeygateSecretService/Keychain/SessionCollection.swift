// The `session` collection: items kept in this daemon's memory only (secrets in locked memory),
// gone when it stops, never on disk. Never locked.
import Keygate
import KeygateCore

struct SessionCollection {
    struct Item {
        var label: String
        var attributes: [String: String]
        var secret: SecureBytes
        var contentType: String
        var created: UInt64
        var modified: UInt64
    }

    private(set) var items: [Int64: Item] = [:]
    private var next: Int64 = 1
    var label = "Session"
    let created = UInt64(WallClock.seconds)
    var modified = UInt64(WallClock.seconds)

    func matching(_ attributes: [String: String]) -> [Int64] {
        items.filter { _, item in attributes.allSatisfy { item.attributes[$0.key] == $0.value } }.keys.sorted()
    }

    /// Adds an item, or with `replace` updates the one with exactly these attributes; its number.
    mutating func store(label: String, attributes: [String: String], secret: SecureBytes, contentType: String,
                        replace: Bool) -> (id: Int64, created: Bool) {
        let now = UInt64(WallClock.seconds)
        modified = now
        if replace, let existing = items.first(where: { $0.value.attributes == attributes })?.key, var item = items[existing] {
            item.label = label
            item.secret = secret
            item.contentType = contentType
            item.modified = now
            items[existing] = item
            return (existing, false)
        }
        let id = next
        next += 1
        items[id] = Item(label: label, attributes: attributes, secret: secret, contentType: contentType, created: now, modified: now)
        return (id, true)
    }

    mutating func update(_ id: Int64, _ change: (inout Item) -> Void) -> Bool {
        guard var item = items[id] else { return false }
        change(&item)
        item.modified = UInt64(WallClock.seconds)
        items[id] = item
        return true
    }

    mutating func remove(_ id: Int64) -> Bool {
        modified = UInt64(WallClock.seconds)
        return items.removeValue(forKey: id) != nil
    }
}
