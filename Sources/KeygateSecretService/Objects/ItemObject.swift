// org.freedesktop.Secret.Item: Locked, Attributes, Label, Created, Modified; GetSecret,
// SetSecret, Delete. A locked item (the keychain locked, or a gated item) gives no secret: its
// lock state is a type (ItemLockState), and only a prompt's authorization opens a gated one, for
// the client that ran it, once. Content types are kept as clients give them. Deleting never
// needs the keychain open, as on Apple and in Keygate's CLI.
import Keygate
import KeygateCore

extension SecretServiceHost {
    func itemCall(_ info: ItemInfo, _ call: SecretServiceCall, sender: String) throws -> CallReply {
        switch call {
        case .getSecret(let sessionPath):
            let session = try session(sessionPath, for: sender)
            guard let secret = try secret(of: info, for: sender) else { throw SecretServiceError.isLocked("the item \(info.label)") }
            return .secret(try session.encode(secret, contentType: info.contentType))

        case .setSecret(let wire):
            let session = try session(wire.session, for: sender)
            let secret = try session.decode(wire)
            try keychain.setSecret(info, secret, contentType: wire.contentType.isEmpty ? "text/plain" : wire.contentType)
            emit(collectionPath(info.collection), SecretInterface.collection, "ItemChanged", [.objectPath(itemPath(info))])
            return .value(.tuple([]))

        case .deleteItem:
            try keychain.delete(info)
            authorized[sender]?.removeValue(forKey: info.ref)
            emit(collectionPath(info.collection), SecretInterface.collection, "ItemDeleted", [.objectPath(itemPath(info))])
            return .value(.tuple([.objectPath("/")]))

        default:
            throw SecretServiceError(SecretServiceErrorName.failed, "not a method of an item")
        }
    }

    /// `sender`'s view: a gated item a prompt opened for its next read is unlocked to it alone.
    func itemProperties(_ info: ItemInfo, for sender: String) -> [(String, BusValue)] {
        [("Locked", .boolean(info.access.isLocked && authorized[sender]?[info.ref] == nil)), ("Attributes", Variant.stringDictionary(info.attributes)),
         ("Label", .string(info.label)), ("Created", .uint64(info.created)), ("Modified", .uint64(info.modified))]
    }

    func setItemProperty(_ info: ItemInfo, property: String, value: BusValue) throws {
        switch property {
        case "Label":
            guard case .string(let label) = value, label.utf8.count <= ClientItemLimits.labelBytes else {
                throw SecretServiceError.invalid("an item's Label is a string of at most \(ClientItemLimits.labelBytes) bytes")
            }
            try keychain.setLabel(info, label)
        case "Attributes":
            guard case .array("{ss}", _) = value else { throw SecretServiceError.invalid("an item's Attributes are a{ss}") }
            switch CallDecoder.attributes(value) {
            case .failure(let refusal): throw SecretServiceError.invalid(refusal.message)
            case .success(let attributes): try keychain.setAttributes(info, attributes)
            }
        default:
            throw SecretServiceError(SecretServiceErrorName.propertyReadOnly, "the item's \(property) cannot be set")
        }
        emit(collectionPath(info.collection), SecretInterface.collection, "ItemChanged", [.objectPath(itemPath(info))])
    }
}
