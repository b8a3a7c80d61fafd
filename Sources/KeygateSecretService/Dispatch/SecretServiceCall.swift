// Every method call keygate-secret-service answers, as one enum case with typed fields, and the
// decoder that makes one from what arrived: the object path, interface, member, signature and
// arguments. The decoder is a pure function (no store, no state), so it is fuzzed and
// unit-tested on its own; it refuses with a typed reason (CallRefusal) anything the
// specification does not define or that is past the item limits, before any object sees it.
// The calls of a lookup (SearchItems, GetSecrets, GetSecret) are read straight from the message
// (`decodeHot`, BusCallReader), every call as a BusValue tree otherwise (`decode`); both resolve
// the interface, count the objects and check the attributes with the same functions here.
import Keygate
import KeygateCore

/// A secret as the Secret Service carries it: (session, parameters, value, content type).
package struct WireSecret: Sendable {
    package var session: String
    package var parameters: [UInt8]
    package var value: [UInt8]
    package var contentType: String

    package init(session: String, parameters: [UInt8], value: [UInt8], contentType: String) {
        self.session = session
        self.parameters = parameters
        self.value = value
        self.contentType = contentType
    }
}

package enum SecretServiceCall: Sendable {
    // org.freedesktop.Secret.Service
    case openSession(algorithm: String, input: BusValue)
    case createCollection(label: String, alias: String)
    case searchItems(attributes: [String: String])
    case unlock(objects: [String])
    case lock(objects: [String])
    case getSecrets(items: [String], session: String)
    case readAlias(name: String)
    case setAlias(name: String, collection: String)
    // org.freedesktop.Secret.Collection
    case deleteCollection
    case searchCollection(attributes: [String: String])
    case createItem(label: String?, attributes: [String: String]?, secret: WireSecret, replace: Bool)
    // org.freedesktop.Secret.Item
    case deleteItem
    case getSecret(session: String)
    case setSecret(WireSecret)
    // org.freedesktop.Secret.Session
    case closeSession
    // org.freedesktop.Secret.Prompt
    case prompt(windowID: String)
    case dismiss
    // org.freedesktop.DBus.Properties and Introspectable
    case getProperty(interface: String, name: String)
    case getAllProperties(interface: String)
    case setProperty(interface: String, name: String, value: BusValue)
    case introspect
}

package struct DecodedCall: Sendable {
    package let target: ObjectPath
    package let call: SecretServiceCall
}

/// Why a call was refused before any object saw it.
package enum CallRefusal: Error, Equatable, Sendable {
    case unknownObject(String)
    case unknownInterface(String)
    case unknownMethod(String)
    case invalidArguments(String)

    package var errorName: String {
        switch self {
        case .unknownObject: return SecretServiceErrorName.noSuchObject
        case .unknownInterface: return "org.freedesktop.DBus.Error.UnknownInterface"
        case .unknownMethod: return "org.freedesktop.DBus.Error.UnknownMethod"
        case .invalidArguments: return "org.freedesktop.DBus.Error.InvalidArgs"
        }
    }

    package var message: String {
        switch self {
        case .unknownObject(let text), .unknownInterface(let text), .unknownMethod(let text), .invalidArguments(let text):
            return text
        }
    }
}

/// The interfaces' names.
package enum SecretInterface {
    package static let service = "org.freedesktop.Secret.Service"
    package static let collection = "org.freedesktop.Secret.Collection"
    package static let item = "org.freedesktop.Secret.Item"
    package static let session = "org.freedesktop.Secret.Session"
    package static let prompt = "org.freedesktop.Secret.Prompt"
    package static let properties = "org.freedesktop.DBus.Properties"
    package static let introspectable = "org.freedesktop.DBus.Introspectable"
}

/// What a client may put in an item: as Keygate's own items (ItemFieldLimits: 1 KiB names, 4 KiB
/// values and labels, 64 KiB secrets), and at most 64 attributes. A Secret Service is not a data store.
package enum ClientItemLimits {
    package static let attributeNameBytes = 1024
    package static let attributeValueBytes = 4096
    package static let attributeCount = 64
    package static let labelBytes = 4096
    package static let secretBytes = 64 * 1024
    /// A DH session's ciphertext: the secret, padded to whole blocks.
    package static let encryptedSecretBytes = secretBytes + 16
    package static let contentTypeBytes = 255
    /// Objects named in one Unlock, Lock or GetSecrets call.
    package static let objectsPerCall = 100_000
}

package enum CallDecoder {
    /// The call that arrived, or why it is refused.
    package static func decode(path: String, interface: String, member: String, signature: String,
                               arguments: BusValue?) -> Result<DecodedCall, CallRefusal> {
        guard let arguments, case .tuple(let args) = arguments else { return .failure(unreadable) }
        let target = ObjectPath(path)
        let resolved: String
        switch resolve(target, path: path, interface: interface, member: member) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let found): resolved = found
        }
        switch decode(resolved, member: member, signature: signature, args) {
        case .success(let call): return .success(DecodedCall(target: target, call: call))
        case .failure(let refusal): return .failure(refusal)
        }
    }

    static let unreadable = CallRefusal.invalidArguments("the call's arguments could not be read")

    /// The interface a call to `target` is for: the one it names, or, when it names none, the
    /// first of the object's interfaces that has `member`.
    static func resolve(_ target: ObjectPath, path: String, interface: String, member: String) -> Result<String, CallRefusal> {
        if case .unknown = target { return .failure(.unknownObject("no such object: \(path)")) }
        let interfaces = Self.interfaces(of: target)
        if interface.isEmpty {
            guard let found = interfaces.first(where: { Self.members($0).contains(member) }) else {
                return .failure(.unknownMethod("no method \(member) on \(path)"))
            }
            return .success(found)
        }
        guard interfaces.contains(interface) else {
            return .failure(.unknownInterface("\(path) has no interface \(interface)"))
        }
        return .success(interface)
    }

    /// The signature each call a lookup makes must have, read straight from the message by
    /// `decodeHot`: SearchItems (service and collection), GetSecrets, and an item's GetSecret.
    static func hotSignature(_ interface: String, _ member: String) -> String? {
        switch (interface, member) {
        case (SecretInterface.service, "SearchItems"), (SecretInterface.collection, "SearchItems"): return "a{ss}"
        case (SecretInterface.service, "GetSecrets"): return "aoo"
        case (SecretInterface.item, "GetSecret"): return "o"
        default: return nil
        }
    }

    /// The calls a lookup makes, read value by value from `reader` into their typed case, with
    /// the same refusals as `decode` (the limits are the same functions). Nil for any other call,
    /// and for one whose signature is not the call's own: `decode` reads and refuses those.
    package static func decodeHot(path: String, interface: String, member: String, signature: String,
                                  reader: @autoclosure () -> BusCallReader?) -> Result<DecodedCall, CallRefusal>? {
        guard member == "SearchItems" || member == "GetSecrets" || member == "GetSecret" else { return nil }
        let target = ObjectPath(path)
        guard case .success(let resolved) = resolve(target, path: path, interface: interface, member: member),
              let wanted = hotSignature(resolved, member), signature == wanted else { return nil }
        guard let reader = reader() else { return .failure(unreadable) }
        let call: SecretServiceCall
        switch (resolved, member) {
        case (SecretInterface.item, "GetSecret"):
            guard let session = reader.readObjectPath() else { return .failure(unreadable) }
            call = .getSecret(session: session)
        case (SecretInterface.service, "GetSecrets"):
            var items: [String] = []
            guard reader.readObjectPaths({ items.append($0) }), let session = reader.readObjectPath() else { return .failure(unreadable) }
            if let refusal = objectCountRefusal(items.count, "items") { return .failure(refusal) }
            call = .getSecrets(items: items, session: session)
        default:
            var check = AttributeCheck()
            guard reader.readStringPairs({ check.add(name: $0, value: $1) }) else { return .failure(unreadable) }
            switch check.result {
            case .failure(let refusal): return .failure(refusal)
            case .success(let found):
                call = resolved == SecretInterface.service ? .searchItems(attributes: found) : .searchCollection(attributes: found)
            }
        }
        return .success(DecodedCall(target: target, call: call))
    }

    /// Unlock, Lock and GetSecrets name at most `ClientItemLimits.objectsPerCall` objects.
    static func objectCountRefusal(_ count: Int, _ what: String) -> CallRefusal? {
        count <= ClientItemLimits.objectsPerCall ? nil : .invalidArguments("too many \(what) in one call")
    }

    // Each list is made once: every call looks its object's up.
    private static let serviceInterfaces = [SecretInterface.service, SecretInterface.properties, SecretInterface.introspectable]
    private static let collectionInterfaces = [SecretInterface.collection, SecretInterface.properties, SecretInterface.introspectable]
    private static let itemInterfaces = [SecretInterface.item, SecretInterface.properties, SecretInterface.introspectable]
    private static let sessionInterfaces = [SecretInterface.session, SecretInterface.introspectable]
    private static let promptInterfaces = [SecretInterface.prompt, SecretInterface.introspectable]
    private static let nodeInterfaces = [SecretInterface.introspectable]

    static func interfaces(of target: ObjectPath) -> [String] {
        switch target {
        case .service: return serviceInterfaces
        case .collection, .alias: return collectionInterfaces
        case .item, .aliasItem: return itemInterfaces
        case .session: return sessionInterfaces
        case .prompt: return promptInterfaces
        case .node: return nodeInterfaces
        case .unknown: return []
        }
    }

    private static let serviceMembers = ["OpenSession", "CreateCollection", "SearchItems", "Unlock", "Lock", "GetSecrets", "ReadAlias", "SetAlias"]
    private static let collectionMembers = ["Delete", "SearchItems", "CreateItem"]
    private static let itemMembers = ["Delete", "GetSecret", "SetSecret"]
    private static let sessionMembers = ["Close"]
    private static let promptMembers = ["Prompt", "Dismiss"]
    private static let propertiesMembers = ["Get", "GetAll", "Set"]
    private static let introspectableMembers = ["Introspect"]

    static func members(_ interface: String) -> [String] {
        switch interface {
        case SecretInterface.service: return serviceMembers
        case SecretInterface.collection: return collectionMembers
        case SecretInterface.item: return itemMembers
        case SecretInterface.session: return sessionMembers
        case SecretInterface.prompt: return promptMembers
        case SecretInterface.properties: return propertiesMembers
        case SecretInterface.introspectable: return introspectableMembers
        default: return []
        }
    }

    private static func decode(_ interface: String, member: String, signature: String,
                               _ args: [BusValue]) -> Result<SecretServiceCall, CallRefusal> {
        func expect(_ wanted: String) -> CallRefusal? {
            signature == wanted ? nil
                : .invalidArguments("\(interface).\(member) takes (\(wanted)), not (\(signature))")
        }
        let known = members(interface)
        guard known.contains(member) else { return .failure(.unknownMethod("\(interface) has no method \(member)")) }
        switch (interface, member) {
        case (SecretInterface.service, "OpenSession"):
            if let refusal = expect("sv") { return .failure(refusal) }
            guard let input = args[1].unboxed else { return .failure(.invalidArguments("OpenSession's input is not a variant")) }
            return .success(.openSession(algorithm: args[0].string, input: input))
        case (SecretInterface.service, "CreateCollection"):
            if let refusal = expect("a{sv}s") { return .failure(refusal) }
            let label = args[0].lookup("org.freedesktop.Secret.Collection.Label")
            if let label, case .string = label {} else if label != nil {
                return .failure(.invalidArguments("the collection's Label is not a string"))
            }
            let text = label?.string ?? ""
            guard text.utf8.count <= ClientItemLimits.labelBytes else {
                return .failure(.invalidArguments("the label is \(text.utf8.count) bytes; the limit is \(ClientItemLimits.labelBytes)"))
            }
            return .success(.createCollection(label: text, alias: args[1].string))
        case (SecretInterface.service, "SearchItems"), (SecretInterface.collection, "SearchItems"):
            if let refusal = expect("a{ss}") { return .failure(refusal) }
            switch attributes(args[0]) {
            case .failure(let refusal): return .failure(refusal)
            case .success(let found):
                return .success(interface == SecretInterface.service ? .searchItems(attributes: found) : .searchCollection(attributes: found))
            }
        case (SecretInterface.service, "Unlock"), (SecretInterface.service, "Lock"):
            if let refusal = expect("ao") { return .failure(refusal) }
            let objects = args[0].strings
            if let refusal = objectCountRefusal(objects.count, "objects") { return .failure(refusal) }
            return .success(member == "Unlock" ? .unlock(objects: objects) : .lock(objects: objects))
        case (SecretInterface.service, "GetSecrets"):
            if let refusal = expect("aoo") { return .failure(refusal) }
            let objects = args[0].strings
            if let refusal = objectCountRefusal(objects.count, "items") { return .failure(refusal) }
            return .success(.getSecrets(items: objects, session: args[1].string))
        case (SecretInterface.service, "ReadAlias"):
            if let refusal = expect("s") { return .failure(refusal) }
            return .success(.readAlias(name: args[0].string))
        case (SecretInterface.service, "SetAlias"):
            if let refusal = expect("so") { return .failure(refusal) }
            return .success(.setAlias(name: args[0].string, collection: args[1].string))
        case (SecretInterface.collection, "Delete"):
            if let refusal = expect("") { return .failure(refusal) }
            return .success(.deleteCollection)
        case (SecretInterface.collection, "CreateItem"):
            if let refusal = expect("a{sv}(oayays)b") { return .failure(refusal) }
            return createItem(properties: args[0], secret: args[1], replace: args[2].boolean ?? false)
        case (SecretInterface.item, "Delete"):
            if let refusal = expect("") { return .failure(refusal) }
            return .success(.deleteItem)
        case (SecretInterface.item, "GetSecret"):
            if let refusal = expect("o") { return .failure(refusal) }
            return .success(.getSecret(session: args[0].string))
        case (SecretInterface.item, "SetSecret"):
            if let refusal = expect("(oayays)") { return .failure(refusal) }
            return secret(args[0]).map { .setSecret($0) }
        case (SecretInterface.session, "Close"):
            if let refusal = expect("") { return .failure(refusal) }
            return .success(.closeSession)
        case (SecretInterface.prompt, "Prompt"):
            if let refusal = expect("s") { return .failure(refusal) }
            return .success(.prompt(windowID: args[0].string))
        case (SecretInterface.prompt, "Dismiss"):
            if let refusal = expect("") { return .failure(refusal) }
            return .success(.dismiss)
        case (SecretInterface.properties, "Get"):
            if let refusal = expect("ss") { return .failure(refusal) }
            return .success(.getProperty(interface: args[0].string, name: args[1].string))
        case (SecretInterface.properties, "GetAll"):
            if let refusal = expect("s") { return .failure(refusal) }
            return .success(.getAllProperties(interface: args[0].string))
        case (SecretInterface.properties, "Set"):
            if let refusal = expect("ssv") { return .failure(refusal) }
            guard let value = args[2].unboxed else { return .failure(.invalidArguments("Set's value is not a variant")) }
            return .success(.setProperty(interface: args[0].string, name: args[1].string, value: value))
        case (SecretInterface.introspectable, "Introspect"):
            if let refusal = expect("") { return .failure(refusal) }
            return .success(.introspect)
        default:
            return .failure(.unknownMethod("\(interface) has no method \(member)"))
        }
    }

    private static func createItem(properties: BusValue, secret wire: BusValue, replace: Bool) -> Result<SecretServiceCall, CallRefusal> {
        var label: String?
        if let value = properties.lookup("org.freedesktop.Secret.Item.Label") {
            guard case .string(let text) = value else { return .failure(.invalidArguments("the item's Label is not a string")) }
            guard text.utf8.count <= ClientItemLimits.labelBytes else {
                return .failure(.invalidArguments("the label is \(text.utf8.count) bytes; the limit is \(ClientItemLimits.labelBytes): use a shorter label"))
            }
            label = text
        }
        var found: [String: String]?
        if let value = properties.lookup("org.freedesktop.Secret.Item.Attributes") {
            guard case .array("{ss}", _) = value else {
                return .failure(.invalidArguments("the item's Attributes are not a dictionary of strings (a{ss})"))
            }
            switch attributes(value) {
            case .failure(let refusal): return .failure(refusal)
            case .success(let parsed): found = parsed
            }
        }
        return secret(wire).map { .createItem(label: label, attributes: found, secret: $0, replace: replace) }
    }

    /// An "a{ss}" within the limits.
    package static func attributes(_ value: BusValue) -> Result<[String: String], CallRefusal> {
        var check = AttributeCheck()
        for entry in value.children {
            guard case .dictEntry(let key, let value) = entry else {
                check.refuse(.invalidArguments("an attribute is not a string pair"))
                continue
            }
            check.add(name: key.string, value: value.string)
        }
        return check.result
    }

    /// An "(oayays)" within the limits.
    private static func secret(_ value: BusValue) -> Result<WireSecret, CallRefusal> {
        guard case .tuple(let parts) = value, parts.count == 4 else { return .failure(.invalidArguments("a secret is (oayays)")) }
        let secret = WireSecret(session: parts[0].string, parameters: parts[1].bytes, value: parts[2].bytes, contentType: parts[3].string)
        guard secret.value.count <= ClientItemLimits.encryptedSecretBytes else {
            return .failure(.invalidArguments("the secret is \(secret.value.count) bytes; the limit is \(ClientItemLimits.secretBytes): store a key or a path to the data instead"))
        }
        guard secret.parameters.count <= 1024 else { return .failure(.invalidArguments("the secret's parameters are \(secret.parameters.count) bytes")) }
        guard secret.contentType.utf8.count <= ClientItemLimits.contentTypeBytes else {
            return .failure(.invalidArguments("the content type is \(secret.contentType.utf8.count) bytes; the limit is \(ClientItemLimits.contentTypeBytes)"))
        }
        return .success(secret)
    }
}

/// The attribute limits, applied entry by entry as a call's "a{ss}" is read (from a BusValue tree
/// or straight from the message): the count first, then the first entry that breaks a rule, in
/// the order sent. A name sent twice keeps its last value.
struct AttributeCheck {
    private(set) var count = 0
    private var found: [String: String] = [:]
    private var firstRefusal: CallRefusal?

    mutating func add(name: String, value text: String) {
        count += 1
        guard firstRefusal == nil else { return }
        if let refusal = Self.refusal(name: name, value: text) {
            firstRefusal = refusal
            return
        }
        // Past the count limit nothing more is kept: the call is refused whatever follows.
        if count <= ClientItemLimits.attributeCount { found[name] = text }
    }

    /// An entry that is no attribute at all (a call's tree of another shape).
    mutating func refuse(_ refusal: CallRefusal) {
        count += 1
        if firstRefusal == nil { firstRefusal = refusal }
    }

    var result: Result<[String: String], CallRefusal> {
        guard count <= ClientItemLimits.attributeCount else {
            return .failure(.invalidArguments("\(count) attributes; the limit is \(ClientItemLimits.attributeCount)"))
        }
        if let firstRefusal { return .failure(firstRefusal) }
        return .success(found)
    }

    static func refusal(name: String, value text: String) -> CallRefusal? {
        guard !name.isEmpty else { return .invalidArguments("an attribute has an empty name") }
        guard name.utf8.count <= ClientItemLimits.attributeNameBytes else {
            return .invalidArguments("an attribute name is \(name.utf8.count) bytes; the limit is \(ClientItemLimits.attributeNameBytes)")
        }
        guard text.utf8.count <= ClientItemLimits.attributeValueBytes else {
            return .invalidArguments("the attribute \(name) is \(text.utf8.count) bytes; the limit is \(ClientItemLimits.attributeValueBytes)")
        }
        return nil
    }
}
