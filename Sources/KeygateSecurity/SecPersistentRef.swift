// kSecReturnPersistentRef / kSecValuePersistentRef: a persistent reference is an opaque
// Data that finds the same item later, in this or another process. Keygate's is the
// item's primary key, JSON-encoded behind a version tag (it names the item; it holds no
// secret). Delegates the model to Keygate's ItemIdentity.
internal import Keygate

enum SecPersistentRef {
    private static let tag = Array("keygate-ref-v1:".utf8)

    private struct Fields: Codable {
        var c: String, s: String, a: String, sv: String, p: String, po: UInt16, pa: String, d: String, t: String
        /// Synchronizable (part of the primary key); absent in references made before it was.
        var y: Bool?
        /// The access group (part of the primary key; "" for none). Absent in references made
        /// before the group joined the key: such a reference finds its item in any group.
        var g: String?
    }

    static func data(for id: ItemIdentity) -> Data {
        let fields = Fields(c: id.itemClass.rawValue, s: id.service, a: id.account, sv: id.server,
                            p: id.protocol?.rawValue ?? "", po: id.port, pa: id.path, d: id.securityDomain,
                            t: id.authenticationType?.rawValue ?? "", y: id.synchronizable ? true : nil,
                            g: id.accessGroup)
        let body = (try? JSONEncoder().encode(fields)) ?? Data()
        return Data(tag) + body
    }

    static func identity(from data: Data) -> ItemIdentity? { reference(from: data)?.identity }

    /// The item a reference names, and whether it names its group (false: a reference made
    /// before the group joined the primary key, which matches the item in any group).
    static func reference(from data: Data) -> (identity: ItemIdentity, namesGroup: Bool)? {
        let bytes = [UInt8](data)
        guard bytes.starts(with: tag),
              let f = try? JSONDecoder().decode(Fields.self, from: Data(bytes.dropFirst(tag.count))),
              let cls = ItemClass(rawValue: f.c) else { return nil }
        switch cls {
        case .genericPassword:
            return (.generic(service: f.s, account: f.a, synchronizable: f.y ?? false, accessGroup: f.g ?? ""), f.g != nil)
        case .internetPassword:
            return (.internet(server: f.sv, account: f.a, protocol: f.p.isEmpty ? nil : InternetProtocol(rawValue: f.p),
                             port: f.po, path: f.pa, securityDomain: f.d,
                             authenticationType: f.t.isEmpty ? nil : AuthenticationType(rawValue: f.t),
                             synchronizable: f.y ?? false, accessGroup: f.g ?? ""), f.g != nil)
        }
    }
}
