// How `list` and `find-*-password` show items: a readable block per item, or JSON, with
// an `invalidated` reason for an item that can no longer be read. Secrets are never part
// of the output; only attributes are.

import Keygate

enum ItemFormatter {
    static func text(_ items: [ItemAttributes]) -> String {
        text(items.map { ListedItem(attributes: $0, invalidated: nil) })
    }

    static func text(_ items: [ListedItem]) -> String {
        var out = ""
        for item in items {
            let a = item.attributes
            let id = a.identity
            out += "class: \(id.itemClass.name)\n"
            switch id.itemClass {
            case .genericPassword:
                out += "    service: \(quoted(id.service))\n"
            case .internetPassword:
                out += "    server: \(quoted(id.server))\n"
                if let p = id.protocol, !p.description.isEmpty { out += "    protocol: \(p.description)\n" }
                if id.port != 0 { out += "    port: \(id.port)\n" }
                if !id.path.isEmpty { out += "    path: \(quoted(id.path))\n" }
                if !id.securityDomain.isEmpty { out += "    security-domain: \(quoted(id.securityDomain))\n" }
                if let t = id.authenticationType, !t.rawValue.isEmpty { out += "    authentication-type: \(t.rawValue)\n" }
            }
            out += "    account: \(quoted(id.account))\n"
            if let l = a.label {
                out += "    label: \(quoted(l))\n"
            } else if a.sealedLabel != nil {
                // A gated item's label is sealed and the keychain is locked: said, never guessed.
                out += "    label: (sealed: the keychain is locked; keygate unlock shows it)\n"
            }
            if let c = a.comment { out += "    comment: \(quoted(c))\n" }
            for name in a.extras.keys.sorted() { out += "    attr: \(quoted(name + "=" + (a.extras[name] ?? "")))\n" }
            out += "    accessible: \(a.accessibility.rawValue)\n"
            out += "    access: \(a.accessControl?.attributeValue ?? "none")\n"
            if let raised = item.accessAtRead {
                out += "    access-at-read: \(raised.attributeValue) (minimum-access\(item.raisedBy.map { ", " + $0.description } ?? ""))\n"
            }
            out += "    created: \(Timestamp.iso8601(a.created))\n"
            out += "    modified: \(Timestamp.iso8601(a.modified))\n"
            if let reason = item.invalidated { out += "    invalidated: \(reason)\n" }
        }
        return out
    }

    static func json(_ items: [ListedItem]) -> String {
        var parts: [String] = []
        for item in items {
            let a = item.attributes
            let id = a.identity
            var fields: [(String, String)] = [("class", JSON.string(id.itemClass.name))]
            switch id.itemClass {
            case .genericPassword:
                fields.append(("service", JSON.string(id.service)))
            case .internetPassword:
                fields.append(("server", JSON.string(id.server)))
                fields.append(("protocol", JSON.string(id.protocol?.description ?? "")))
                fields.append(("port", String(id.port)))
                fields.append(("path", JSON.string(id.path)))
                fields.append(("securityDomain", JSON.string(id.securityDomain)))
                fields.append(("authenticationType", JSON.string(id.authenticationType?.rawValue ?? "")))
            }
            fields.append(("account", JSON.string(id.account)))
            fields.append(("label", a.label.map(JSON.string) ?? "null"))
            fields.append(("comment", a.comment.map(JSON.string) ?? "null"))
            fields.append(("accessible", JSON.string(a.accessibility.rawValue)))
            fields.append(("access", a.accessControl.map { JSON.string($0.attributeValue) } ?? "null"))
            fields.append(("created", JSON.string(Timestamp.iso8601(a.created))))
            fields.append(("modified", JSON.string(Timestamp.iso8601(a.modified))))
            fields.append(("invalidated", item.invalidated.map(JSON.string) ?? "null"))
            fields.append(("attributes", JSON.object(a.extras.keys.sorted().map { ($0, JSON.string(a.extras[$0] ?? "")) })))
            parts.append(JSON.object(fields))
        }
        return "[" + parts.joined(separator: ",") + "]\n"
    }

    /// Quotes a value when it has spaces or control characters, so output stays one line per field.
    static func quoted(_ s: String) -> String {
        let plain = !s.isEmpty && s.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x22 && $0.value != 0x7f }
        return plain ? s : JSON.string(s)
    }
}
