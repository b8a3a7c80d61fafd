// A value per policy key, stored in a fixed array indexed by the key's position: what the
// parser and the merge keep for each key (the line it was set on, where it came from).
// Not a Dictionary keyed by PolicyKey: instantiating that type at run time makes the Swift
// runtime look up PolicyKey's Hashable conformance by scanning every conformance record in
// the binary (~0.2 M instructions), in every `keygate get` that parses the policy
// (docs/DECISIONS.md, "A read pays for its own work only").

public struct PolicyKeyMap<Value: Sendable>: Sendable {
    private var values = [Value?](repeating: nil, count: PolicyKey.count)

    public init() {}

    public subscript(key: PolicyKey) -> Value? {
        get { values[key.position] }
        set { values[key.position] = newValue }
    }

    /// True when no key has a value.
    public var isEmpty: Bool { values.allSatisfy { $0 == nil } }
}

extension PolicyKey {
    /// How many keys there are.
    static let count = allCases.count

    /// The key's place in declaration order, 0 ..< count (a switch: no lookup at run time).
    var position: Int {
        switch self {
        case .defaultAccess: return 0
        case .minimumAccess: return 1
        case .accessible: return 2
        case .reuseDuration: return 3
        case .reuseScope: return 4
        case .pamService: return 5
        case .prompt: return 6
        case .maxTries: return 7
        case .lockout: return 8
        case .lockAfter: return 9
        case .allowNonInteractive: return 10
        case .hostProtector: return 11
        case .fingerUnlock: return 12
        }
    }
}
