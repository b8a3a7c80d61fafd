// org.freedesktop.Secret.Collection: `login` (the keychain: Keygate's own items and the ones
// clients keep there; Locked follows the master key in the kernel keyring, so pam_keygate's
// login opens it and logout or `keygate lock` closes it), `session` (memory only), and the
// collections clients create (kept in the embedded store, sealed with the same keys, locked with
// the keychain). Items, Label, Locked, Created, Modified; SearchItems, CreateItem (Label and
// Attributes properties, `replace`), Delete; ItemCreated, ItemDeleted and ItemChanged.
import Keygate
import KeygateCore

extension SecretServiceHost {
    func collectionCall(_ name: String, _ call: SecretServiceCall, sender: String) throws -> CallReply {
        switch call {
        case .searchCollection(let attributes):
            return .items(try keychain.entries(in: name, matching: attributes).map(itemPath))

        case .createItem(let label, let attributes, let wire, let replace):
            let session = try session(wire.session, for: sender)
            guard !keychain.isLocked(collection: name) else { throw SecretServiceError.isLocked("the collection \(name)") }
            let secret = try session.decode(wire)
            let contentType = wire.contentType.isEmpty ? "text/plain" : wire.contentType
            let (info, created) = try keychain.createItem(in: name, label: label ?? "", attributes: attributes ?? [:], secret: secret,
                                                          contentType: contentType, replace: replace)
            let path = itemPath(info)
            emit(collectionPath(name), SecretInterface.collection, created ? "ItemCreated" : "ItemChanged", [.objectPath(path)])
            return .value(.tuple([.objectPath(path), .objectPath("/")]))

        case .deleteCollection:
            switch name {
            case CollectionName.login:
                throw SecretServiceError(SecretServiceErrorName.notSupported,
                                         "the login collection is the keychain itself: delete its items one by one, or run keygate forget-user")
            case CollectionName.session:
                for info in try keychain.items(in: name, matching: [:]) { try keychain.delete(info) }
            default:
                try keychain.store.deleteForeignCollection(name)
                emit(ObjectPath.service.path, SecretInterface.service, "CollectionDeleted", [.objectPath(collectionPath(name))])
            }
            return .value(.tuple([.objectPath("/")]))

        default:
            throw SecretServiceError(SecretServiceErrorName.failed, "not a method of a collection")
        }
    }

    func collectionProperties(_ name: String) throws -> [(String, BusValue)] {
        let items = try keychain.items(in: name, matching: [:]).map(itemPath)
        let label: String, created: UInt64, modified: UInt64
        switch name {
        case CollectionName.login:
            (label, created, modified) = ("Login", 0, 0)
        case CollectionName.session:
            (label, created, modified) = (keychain.session.label, keychain.session.created, keychain.session.modified)
        default:
            guard let row = try keychain.createdCollections().first(where: { $0.name == name }) else {
                throw SecretServiceError.noSuchObject(collectionPath(name))
            }
            (label, created, modified) = (row.label, row.created, row.modified)
        }
        return [("Items", Variant.objectPaths(items)), ("Label", .string(label)), ("Locked", .boolean(keychain.isLocked(collection: name))),
                ("Created", .uint64(created)), ("Modified", .uint64(modified))]
    }

    func setCollectionProperty(_ name: String, property: String, value: BusValue) throws {
        guard property == "Label" else {
            throw SecretServiceError(SecretServiceErrorName.propertyReadOnly, "the collection's \(property) cannot be set")
        }
        guard case .string(let label) = value, label.utf8.count <= ClientItemLimits.labelBytes else {
            throw SecretServiceError.invalid("a collection's Label is a string of at most \(ClientItemLimits.labelBytes) bytes")
        }
        switch name {
        case CollectionName.login:
            throw SecretServiceError(SecretServiceErrorName.notSupported, "the login collection is the keychain: its label is fixed")
        case CollectionName.session:
            keychain.session.label = label
        default:
            guard var row = try keychain.createdCollections().first(where: { $0.name == name }) else {
                throw SecretServiceError.noSuchObject(collectionPath(name))
            }
            row.label = label
            row.modified = UInt64(WallClock.seconds)
            try keychain.store.writeForeignCollection(row)
        }
        emit(ObjectPath.service.path, SecretInterface.service, "CollectionChanged", [.objectPath(collectionPath(name))])
    }
}
