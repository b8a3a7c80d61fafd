// Encodes an Encodable value as the compact JSON the CLI prints for `--json`: keys in the
// order the value's encode(to:) writes them (not hashed, so the output is stable and reads
// in the order the type declares), nil written as null when the type encodes it, strings
// escaped by JSON.string. Plain standard library: no Foundation encoder to load.

enum JSONOutputEncoder {
    /// The value as one line of JSON.
    static func encode<T: Encodable>(_ value: T) throws -> String {
        let root = JSONNode()
        try value.encode(to: NodeEncoder(node: root, codingPath: []))
        return root.text
    }
}

/// One JSON value being built. A class, so that containers (value types) can fill it in.
private final class JSONNode {
    enum Value {
        case empty
        case scalar(String)
        case object([(key: String, node: JSONNode)])
        case array([JSONNode])
    }

    var value: Value = .empty

    var text: String {
        switch value {
        case .empty: return "{}"
        case .scalar(let text): return text
        case .object(let fields): return "{" + fields.map { JSON.string($0.key) + ":" + $0.node.text }.joined(separator: ",") + "}"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        }
    }

    /// The child under `key`, made (or replaced) in insertion order.
    func child(_ key: String) -> JSONNode {
        var fields: [(key: String, node: JSONNode)] = []
        if case .object(let existing) = value { fields = existing }
        let node = JSONNode()
        if let index = fields.firstIndex(where: { $0.key == key }) {
            fields[index].node = node
        } else {
            fields.append((key, node))
        }
        value = .object(fields)
        return node
    }

    func appended() -> JSONNode {
        var items: [JSONNode] = []
        if case .array(let existing) = value { items = existing }
        let node = JSONNode()
        items.append(node)
        value = .array(items)
        return node
    }

    var count: Int {
        if case .array(let items) = value { return items.count }
        return 0
    }

    func makeObject() { if case .object = value {} else { value = .object([]) } }
    func makeArray() { if case .array = value {} else { value = .array([]) } }

    func set<T: Encodable>(_ encodable: T, codingPath: [any CodingKey]) throws {
        switch encodable {
        case let v as String: value = .scalar(JSON.string(v))
        case let v as Bool: value = .scalar(v ? "true" : "false")
        case let v as Int: value = .scalar(String(v))
        case let v as Int8: value = .scalar(String(v))
        case let v as Int16: value = .scalar(String(v))
        case let v as Int32: value = .scalar(String(v))
        case let v as Int64: value = .scalar(String(v))
        case let v as UInt: value = .scalar(String(v))
        case let v as UInt8: value = .scalar(String(v))
        case let v as UInt16: value = .scalar(String(v))
        case let v as UInt32: value = .scalar(String(v))
        case let v as UInt64: value = .scalar(String(v))
        case let v as Double:
            guard v.isFinite else {
                throw EncodingError.invalidValue(v, .init(codingPath: codingPath, debugDescription: "JSON has no \(v)"))
            }
            value = .scalar(String(v))
        case let v as Float:
            guard v.isFinite else {
                throw EncodingError.invalidValue(v, .init(codingPath: codingPath, debugDescription: "JSON has no \(v)"))
            }
            value = .scalar(String(v))
        default:
            try encodable.encode(to: NodeEncoder(node: self, codingPath: codingPath))
        }
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { return nil }
}

private struct NodeEncoder: Encoder {
    let node: JSONNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedWriter<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedWriter(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleWriter(node: node, codingPath: codingPath)
    }
}

private struct KeyedWriter<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: JSONNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(key.stringValue).value = .scalar("null") }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try put(value, key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try put(value, key) }

    private func put<T: Encodable>(_ value: T, _ key: Key) throws {
        try node.child(key.stringValue).set(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = node.child(key.stringValue)
        child.makeObject()
        return KeyedEncodingContainer(KeyedWriter<NestedKey>(node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = node.child(key.stringValue)
        child.makeArray()
        return UnkeyedWriter(node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.child("super"), codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedWriter: UnkeyedEncodingContainer {
    let node: JSONNode
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    private var nextPath: [any CodingKey] { codingPath + [IndexKey(intValue: count)] }

    mutating func encodeNil() throws { node.appended().value = .scalar("null") }
    mutating func encode<T: Encodable>(_ value: T) throws { try put(value) }
    mutating func encode(_ value: Bool) throws { try put(value) }
    mutating func encode(_ value: String) throws { try put(value) }
    mutating func encode(_ value: Double) throws { try put(value) }
    mutating func encode(_ value: Float) throws { try put(value) }
    mutating func encode(_ value: Int) throws { try put(value) }
    mutating func encode(_ value: Int8) throws { try put(value) }
    mutating func encode(_ value: Int16) throws { try put(value) }
    mutating func encode(_ value: Int32) throws { try put(value) }
    mutating func encode(_ value: Int64) throws { try put(value) }
    mutating func encode(_ value: UInt) throws { try put(value) }
    mutating func encode(_ value: UInt8) throws { try put(value) }
    mutating func encode(_ value: UInt16) throws { try put(value) }
    mutating func encode(_ value: UInt32) throws { try put(value) }
    mutating func encode(_ value: UInt64) throws { try put(value) }

    private func put<T: Encodable>(_ value: T) throws {
        let path = nextPath
        try node.appended().set(value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let path = nextPath
        let child = node.appended()
        child.makeObject()
        return KeyedEncodingContainer(KeyedWriter<NestedKey>(node: child, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = nextPath
        let child = node.appended()
        child.makeArray()
        return UnkeyedWriter(node: child, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = nextPath
        return NodeEncoder(node: node.appended(), codingPath: path)
    }
}

private struct SingleWriter: SingleValueEncodingContainer {
    let node: JSONNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.value = .scalar("null") }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: Bool) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: String) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: Double) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: Float) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: Int) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: Int8) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: Int16) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: Int32) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: Int64) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt8) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt16) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt32) throws { try node.set(value, codingPath: codingPath) }
    mutating func encode(_ value: UInt64) throws { try node.set(value, codingPath: codingPath) }
}
