// The ItemStore over libsecret: Keygate's items live in the Secret Service's default
// collection under the "io.keygate.Item" schema. Every call runs under a ServiceDeadline,
// a locked collection is reported as locked (never as "not found"), and nothing here ever
// asks for an unlock prompt. Attribute mapping is ItemAttributeCodec's; C resources are
// owned by the classes in GLibResources; errors are worded by SecretServiceFailure.
internal import CSecret

final class SecretServiceStore: ItemStore {
    let deadline: Duration
    private let schema: SecretSchemaRef?

    init(deadline: Duration = .seconds(5)) {
        self.deadline = deadline
        schema = try? SecretSchemaRef(name: ItemAttributeCodec.schemaName,
                                      stringAttributes: ItemAttributeCodec.attributeNames)
    }

    func search(_ query: ItemQuery, loadBlobs: Bool) throws -> [StoredItem] {
        let call = try begin()
        let collection = try call.unlockedDefaultCollection()
        let found = try call.items(in: collection, matching: query)
        if loadBlobs { try call.loadSecrets(of: found.map(\.item)) }
        return try found.map { entry in
            guard loadBlobs else { return StoredItem(attributes: entry.attributes, blob: nil) }
            return StoredItem(attributes: entry.attributes, blob: try call.secret(of: entry.item))
        }
    }

    func create(_ attributes: ItemAttributes, blob: [UInt8], replace: Bool) throws {
        let call = try begin()
        let collection = try call.unlockedDefaultCollection()
        let existing = try call.items(in: collection, matching: ItemQuery(exactly: attributes.identity))
        let value = try SecretValueRef(copying: blob)
        let label = ItemAttributeCodec.label(for: attributes)
        let table = try GStringTable(ItemAttributeCodec.encode(attributes))
        guard let current = existing.first else {
            try call.createItem(in: collection, attributes: table, label: label, value: value)
            return
        }
        guard replace else {
            throw KeychainError.duplicateItem("an item for \(attributes.identity.displayName) already exists: "
                                              + "update it, or delete it first")
        }
        // In place, so the item keeps its creation date and its D-Bus object.
        try call.setSecret(of: current.item, to: value)
        if ItemAttributeCodec.encode(current.attributes) != ItemAttributeCodec.encode(attributes) {
            try call.setAttributes(of: current.item, to: table)
        }
        if current.attributes.label != label {
            try call.setLabel(of: current.item, to: label)
        }
    }

    @discardableResult
    func delete(_ query: ItemQuery) throws -> Int {
        let call = try begin()
        let collection = try call.unlockedDefaultCollection()
        let found = try call.items(in: collection, matching: query)
        for entry in found { try call.deleteItem(entry.item) }
        return found.count
    }

    func status() throws -> StoreStatus {
        let call = try begin()
        let collection = try call.defaultCollection()
        let label = takeGString(secret_collection_get_label(collection.pointer)) ?? ""
        let path = g_dbus_proxy_get_object_path(proxy(collection.pointer)).map { String(cString: $0) } ?? ""
        return StoreStatus(backend: "Secret Service (libsecret)", collection: label.isEmpty ? path : label,
                           locked: secret_collection_get_locked(collection.pointer) != 0)
    }

    private func begin() throws -> ServiceCall {
        guard let schema else {
            throw KeychainError.notAvailable("could not create the \(ItemAttributeCodec.schemaName) item schema: "
                                             + "check the libsecret installation")
        }
        let call = ServiceCall(deadline: try ServiceDeadline(deadline), schema: schema)
        return call
    }
}

/// A SecretService/SecretCollection/SecretItem proxy seen as its GDBusProxy base.
private func proxy<T>(_ pointer: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<GDBusProxy> {
    UnsafeMutablePointer<GDBusProxy>(OpaquePointer(pointer))
}

/// One storage operation: its deadline, and the libsecret calls it makes (each passes the
/// deadline's GCancellable).
private struct ServiceCall {
    let deadline: ServiceDeadline
    let schema: SecretSchemaRef
    private var cancellable: UnsafeMutablePointer<GCancellable> { deadline.cancellable }

    init(deadline: ServiceDeadline, schema: SecretSchemaRef) {
        self.deadline = deadline
        self.schema = schema
    }

    struct Found {
        let item: GObjectRef<SecretItem>
        let attributes: ItemAttributes
    }

    private func failure(_ error: UnsafeMutablePointer<GError>?, _ action: String) -> KeychainError {
        SecretServiceFailure.map(GErrorInfo.take(error), action: action, deadline: deadline)
    }

    /// The process's SecretService (libsecret caches the proxy: the bus connection and the
    /// session are opened once per process).
    func service() throws -> GObjectRef<SecretService> {
        var error: UnsafeMutablePointer<GError>?
        guard let service = secret_service_get_sync(SECRET_SERVICE_NONE, cancellable, &error) else {
            throw failure(error, "connect to the session bus")
        }
        // GLib's shared bus connection raises SIGTERM in its process when the bus goes away.
        // A library inside sshd or a PAM stack must fail its call instead.
        if let connection = g_dbus_proxy_get_connection(proxy(service)) {
            g_dbus_connection_set_exit_on_close(connection, 0)
        }
        return GObjectRef(taking: service)
    }

    /// The collection behind the "default" alias, as a fresh proxy (so its Locked property is current).
    func defaultCollection() throws -> GObjectRef<SecretCollection> {
        let service = try service()
        var error: UnsafeMutablePointer<GError>?
        guard let collection = secret_collection_for_alias_sync(service.pointer, "default", SECRET_COLLECTION_NONE,
                                                                cancellable, &error) else {
            if error == nil { throw SecretServiceFailure.noDefaultCollection() }
            throw failure(error, "find the default collection")
        }
        return GObjectRef(taking: collection)
    }

    /// The default collection, or `.interactionNotAllowed` when it is locked. Never prompts.
    func unlockedDefaultCollection() throws -> GObjectRef<SecretCollection> {
        let collection = try defaultCollection()
        if secret_collection_get_locked(collection.pointer) != 0 { throw SecretServiceFailure.locked() }
        return collection
    }

    /// Keygate's items in `collection` that match `query` (label matched here, client-side).
    func items(in collection: GObjectRef<SecretCollection>, matching query: ItemQuery) throws -> [Found] {
        let table = try GStringTable(ItemAttributeCodec.encode(query))
        var error: UnsafeMutablePointer<GError>?
        // SECRET_SEARCH_ALL only: no UNLOCK (never prompt) and no LOAD_SECRETS (libsecret would
        // load them without our cancellable; loadSecrets does it under the deadline).
        let list = secret_collection_search_sync(collection.pointer, schema.schema, table.table, SECRET_SEARCH_ALL,
                                                 cancellable, &error)
        if error != nil { throw failure(error, "search for items") }
        var found: [Found] = []
        for item in takeItemList(list) {
            if secret_item_get_locked(item.pointer) != 0 { throw SecretServiceFailure.locked() }
            let attributes = try decode(item)
            if query.matches(attributes) { found.append(Found(item: item, attributes: attributes)) }
        }
        return found
    }

    private func decode(_ item: GObjectRef<SecretItem>) throws -> ItemAttributes {
        let label = takeGString(secret_item_get_label(item.pointer)) ?? ""
        let entries = secret_item_get_attributes(item.pointer).map { GStringTable(taking: $0).entries } ?? [:]
        guard let attributes = ItemAttributeCodec.decode(entries, label: label,
                                                         created: UInt64(secret_item_get_created(item.pointer)),
                                                         modified: UInt64(secret_item_get_modified(item.pointer))) else {
            throw KeychainError.decode("the keyring item \"\(label)\" has \(ItemAttributeCodec.schemaName) attributes "
                                       + "Keygate cannot read: delete it with secret-tool or seahorse")
        }
        return attributes
    }

    /// Loads the secrets of `items` in one round trip.
    func loadSecrets(of items: [GObjectRef<SecretItem>]) throws {
        guard !items.isEmpty else { return }
        var error: UnsafeMutablePointer<GError>?
        let ok = withItemList(items) { secret_item_load_secrets_sync($0, cancellable, &error) }
        if ok == 0 || error != nil { throw failure(error, "read item secrets") }
    }

    /// The loaded secret of `item`.
    func secret(of item: GObjectRef<SecretItem>) throws -> [UInt8] {
        guard let value = secret_item_get_secret(item.pointer) else {
            // load_secrets skips items that are locked; anything else is a store failure.
            if secret_item_get_locked(item.pointer) != 0 { throw SecretServiceFailure.locked() }
            throw KeychainError.notAvailable("the Secret Service returned no secret for an item: check that "
                                             + "gnome-keyring-daemon is healthy, then try again")
        }
        return SecretValueRef(taking: value).bytes
    }

    func createItem(in collection: GObjectRef<SecretCollection>, attributes: GStringTable, label: String,
                    value: SecretValueRef) throws {
        var error: UnsafeMutablePointer<GError>?
        guard let item = secret_item_create_sync(collection.pointer, schema.schema, attributes.table, label, value.value,
                                                 SECRET_ITEM_CREATE_NONE, cancellable, &error) else {
            throw failure(error, "create the item")
        }
        g_object_unref(item)
    }

    func setSecret(of item: GObjectRef<SecretItem>, to value: SecretValueRef) throws {
        var error: UnsafeMutablePointer<GError>?
        if secret_item_set_secret_sync(item.pointer, value.value, cancellable, &error) == 0 {
            throw failure(error, "update the item's secret")
        }
    }

    func setAttributes(of item: GObjectRef<SecretItem>, to table: GStringTable) throws {
        var error: UnsafeMutablePointer<GError>?
        if secret_item_set_attributes_sync(item.pointer, schema.schema, table.table, cancellable, &error) == 0 {
            throw failure(error, "update the item's attributes")
        }
    }

    func setLabel(of item: GObjectRef<SecretItem>, to label: String) throws {
        var error: UnsafeMutablePointer<GError>?
        if secret_item_set_label_sync(item.pointer, label, cancellable, &error) == 0 {
            throw failure(error, "update the item's label")
        }
    }

    func deleteItem(_ item: GObjectRef<SecretItem>) throws {
        var error: UnsafeMutablePointer<GError>?
        if secret_item_delete_sync(item.pointer, cancellable, &error) == 0 {
            throw failure(error, "delete the item")
        }
    }
}
