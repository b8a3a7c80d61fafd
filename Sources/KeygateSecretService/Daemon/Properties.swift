// org.freedesktop.DBus.Properties for every object keygate-secret-service serves (sd-bus would
// do it from a vtable; a fallback callback serves it itself): Get, GetAll and Set, routed to the
// object's own list (ServiceObject, CollectionObject, ItemObject). Sessions and prompts have none.
import Keygate
import KeygateCore

extension SecretServiceHost {
    func properties(_ target: ObjectPath, interface: String, sender: String) throws -> [(String, BusValue)] {
        switch target {
        case .service:
            guard interface == SecretInterface.service || interface.isEmpty else { return [] }
            return try serviceProperties()
        case .collection(let name):
            guard interface == SecretInterface.collection || interface.isEmpty else { return [] }
            return try collectionProperties(try collection(named: name, path: target.path))
        case .alias(let alias):
            guard interface == SecretInterface.collection || interface.isEmpty else { return [] }
            return try collectionProperties(try collection(alias: alias, path: target.path))
        case .item, .aliasItem:
            guard interface == SecretInterface.item || interface.isEmpty else { return [] }
            return itemProperties(try item(at: target), for: sender)
        case .session, .prompt, .node:
            return []
        case .unknown:
            throw SecretServiceError.noSuchObject(target.path)
        }
    }

    func property(_ target: ObjectPath, interface: String, name: String, sender: String) throws -> BusValue {
        guard let value = try properties(target, interface: interface, sender: sender).first(where: { $0.0 == name })?.1 else {
            throw SecretServiceError(SecretServiceErrorName.unknownProperty, "\(target.path) has no property \(interface).\(name)")
        }
        return value
    }

    func setProperty(_ target: ObjectPath, interface: String, name: String, value: BusValue) throws {
        switch target {
        case .collection(let collection) where interface == SecretInterface.collection:
            try setCollectionProperty(try self.collection(named: collection, path: target.path), property: name, value: value)
        case .alias(let alias) where interface == SecretInterface.collection:
            try setCollectionProperty(try collection(alias: alias, path: target.path), property: name, value: value)
        case .item, .aliasItem:
            guard interface == SecretInterface.item else { fallthrough }
            try setItemProperty(try item(at: target), property: name, value: value)
        default:
            throw SecretServiceError(SecretServiceErrorName.unknownProperty, "\(target.path) has no writable property \(interface).\(name)")
        }
    }
}
