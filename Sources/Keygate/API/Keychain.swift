// The Swift API, in the spirit of KeychainAccess and Valet: an immutable value
// that names a service (or an internet server), configured fluently, with `set`,
// `add`, `data(for:)` and friends keyed by account. A missing item is nil, not an
// error; real failures throw KeychainError, which carries Apple's OSStatus.
//
//     let keychain = Keychain(service: "vpn").label("VPN").accessibility(.afterFirstUnlock)
//     try keychain.set("hunter2", for: "alice")
//     let password = try keychain.string(for: "alice")
//
// Delegates every operation to KeychainOperations.
public import FoundationEssentials

public struct Keychain: Sendable {
    /// What the keychain's items are keyed by, apart from the account.
    public enum Scope: Sendable, Equatable {
        case service(String)
        case server(String, protocol: InternetProtocol?, port: UInt16, path: String, securityDomain: String,
                    authenticationType: AuthenticationType?)
    }

    public let scope: Scope
    public private(set) var label: String?
    public private(set) var comment: String?
    public private(set) var accessibility: Accessibility = .whenUnlocked
    public private(set) var accessControl: AccessControl?
    public private(set) var authenticationPrompt: String?
    private var prompter: (any Prompter)?
    private var authenticationContext: AuthenticationContext?

    /// Generic passwords for one service (kSecClassGenericPassword).
    public init(service: String) {
        scope = .service(service)
    }

    /// Internet passwords for one server (kSecClassInternetPassword).
    public init(server: String, protocol: InternetProtocol? = nil, port: UInt16 = 0, path: String = "",
                securityDomain: String = "", authenticationType: AuthenticationType? = nil) {
        scope = .server(server, protocol: `protocol`, port: port, path: path, securityDomain: securityDomain,
                        authenticationType: authenticationType)
    }

    // MARK: Fluent options (each returns a modified copy)

    public func label(_ label: String) -> Keychain { var k = self; k.label = label; return k }
    public func comment(_ comment: String) -> Keychain { var k = self; k.comment = comment; return k }
    public func accessibility(_ accessibility: Accessibility) -> Keychain {
        var k = self; k.accessibility = accessibility; return k
    }
    /// When the secret is readable, and what a read must prove first (Apple's
    /// SecAccessControl): `.accessibility(.whenUnlocked, access: .userPresence)`.
    public func accessibility(_ accessibility: Accessibility, access: AccessControl) -> Keychain {
        var k = self; k.accessibility = accessibility; k.accessControl = access; return k
    }
    /// Reads through one context share one authentication (Apple's LAContext).
    public func authenticationContext(_ context: AuthenticationContext) -> Keychain {
        var k = self; k.authenticationContext = context; return k
    }
    /// The reason shown when a read must ask for the password (Apple's localizedReason).
    public func authenticationPrompt(_ reason: String) -> Keychain {
        var k = self; k.authenticationPrompt = reason; return k
    }
    /// How to ask for the password. The default uses the terminal, or KEYGATE_ASKPASS.
    public func prompter(_ prompter: any Prompter) -> Keychain { var k = self; k.prompter = prompter; return k }

    // MARK: Writing

    /// Stores the value, replacing any existing one (upsert).
    public func set(_ value: Data, for account: String) throws {
        try write(value, for: account, replace: true)
    }

    public func set(_ value: String, for account: String) throws {
        try set(Data(value.utf8), for: account)
    }

    /// Stores any Codable value, encoded as JSON.
    public func set<T: Encodable>(_ value: T, for account: String) throws {
        try set(try encode(value), for: account)
    }

    /// Stores the value; throws `.duplicateItem` if the account already has one.
    public func add(_ value: Data, for account: String) throws {
        try write(value, for: account, replace: false)
    }

    public func add(_ value: String, for account: String) throws {
        try add(Data(value.utf8), for: account)
    }

    public func add<T: Encodable>(_ value: T, for account: String) throws {
        try add(try encode(value), for: account)
    }

    // MARK: Reading

    /// The secret, or nil when there is no such item.
    public func data(for account: String) throws -> Data? {
        guard let secret = try operations().secret(for: identity(account)) else { return nil }
        return secret.withUnsafeBytes { Data($0) }
    }

    /// The secret as UTF-8 text; throws `.decode` when it is not valid UTF-8.
    public func string(for account: String) throws -> String? {
        guard let data = try data(for: account) else { return nil }
        guard let text = String(validating: data, as: UTF8.self) else {
            throw KeychainError.decode("the secret for \(account) is not UTF-8 text: read it with data(for:)")
        }
        return text
    }

    /// The secret decoded from JSON, or nil when there is no such item.
    public func decode<T: Decodable>(_ type: T.Type, for account: String) throws -> T? {
        guard let data = try data(for: account) else { return nil }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw KeychainError.decode("the secret for \(account) is not a JSON-encoded \(T.self): \(error)")
        }
    }

    /// Everything but the secret, or nil. Never prompts.
    public func attributes(for account: String) throws -> ItemAttributes? {
        try operations().attributes(matching: ItemQuery(exactly: identity(account))).first
    }

    /// Whether the account has an item. Never prompts.
    public func contains(_ account: String) throws -> Bool {
        try attributes(for: account) != nil
    }

    /// The accounts that have items in this service or server. Never prompts.
    public func allKeys() throws -> [String] {
        try operations().attributes(matching: scopeQuery()).map(\.identity.account)
    }

    // MARK: Removing

    /// Removes the account's item; removing a missing item is not an error.
    public func remove(_ account: String) throws {
        try operations().delete(matching: ItemQuery(exactly: identity(account)))
    }

    /// Removes every item of this service or server.
    public func removeAll() throws {
        try operations().delete(matching: scopeQuery())
    }

    // MARK: Internals

    func identity(_ account: String) -> ItemIdentity {
        switch scope {
        case .service(let service):
            return .generic(service: service, account: account)
        case let .server(server, proto, port, path, domain, auth):
            return .internet(server: server, account: account, protocol: proto, port: port, path: path,
                             securityDomain: domain, authenticationType: auth)
        }
    }

    func scopeQuery() -> ItemQuery {
        switch scope {
        case .service(let service):
            return ItemQuery(itemClass: .genericPassword, service: service)
        case let .server(server, proto, port, path, domain, auth):
            return ItemQuery(itemClass: .internetPassword, server: server, protocol: proto,
                             port: port == 0 ? nil : port, path: path.isEmpty ? nil : path,
                             securityDomain: domain.isEmpty ? nil : domain, authenticationType: auth)
        }
    }

    private func operations() throws -> KeychainOperations {
        // The edge for library callers: the process's environment, read once per call and passed down.
        let environment = KeygateEnvironment.process()
        return try KeychainOperations(prompter: prompter ?? SystemPrompter(environment: environment),
                                      reason: authenticationPrompt, context: authenticationContext, environment: environment)
    }

    private func write(_ value: Data, for account: String, replace: Bool) throws {
        var bytes = [UInt8](value)
        let secret = try SecureBytes(consuming: &bytes)
        let attributes = ItemAttributes(identity: identity(account), label: label, comment: comment,
                                        accessibility: accessibility, accessControl: accessControl)
        try operations().add(attributes, secret: secret, replace: replace)
    }

    private func encode<T: Encodable>(_ value: T) throws -> Data {
        do {
            return try JSONEncoder().encode(value)
        } catch {
            throw KeychainError.param("the value for the keychain could not be encoded as JSON: \(error)")
        }
    }
}
