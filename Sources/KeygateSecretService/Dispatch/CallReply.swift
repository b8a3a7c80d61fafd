// What the host answers a call with: a BusValue tree for most calls, and for the calls a lookup
// makes (SearchItems, GetSecrets, GetSecret) their typed reply, which the daemon writes straight
// into the sd-bus reply (`write(to:)`): no tree to build and release, and a plain session's
// secret goes from locked memory into the message (marked sensitive, so sd-bus wipes it) with no
// array in between.
import Keygate
import KeygateCore

/// A secret on its way to a client, as its session carries it: "(oayays)".
package struct OutgoingSecret {
    package enum Value {
        /// A plain session's: the secret itself, still in locked memory.
        case plain(SecureBytes)
        /// A DH session's: the IV and the ciphertext.
        case encrypted(iv: [UInt8], ciphertext: [UInt8])
    }

    package let session: String
    package let value: Value
    package let contentType: String

    func write(to writer: BusReplyWriter) -> Bool {
        guard writer.open(.structure, "oayays"), writer.objectPath(session) else { return false }
        switch value {
        case .plain(let secret):
            guard writer.bytes(UnsafeRawBufferPointer(start: nil, count: 0)),
                  secret.withUnsafeBytes({ writer.secretBytes($0) }) else { return false }
        case .encrypted(let iv, let ciphertext):
            guard iv.withUnsafeBytes({ writer.bytes($0) }), ciphertext.withUnsafeBytes({ writer.bytes($0) }) else { return false }
        }
        return writer.string(contentType) && writer.close()
    }
}

package enum CallReply {
    /// Any call's arguments, as a tuple.
    case value(BusValue)
    /// The service's SearchItems: "(aoao)".
    case itemLists(unlocked: [String], locked: [String])
    /// A collection's SearchItems: "(ao)".
    case items([String])
    /// GetSecrets: "(a{o(oayays)})", by item path.
    case secrets([(path: String, secret: OutgoingSecret)])
    /// An item's GetSecret: "((oayays))".
    case secret(OutgoingSecret)

    /// Writes a typed reply's arguments with `writer`; false for `.value` (BusServer writes that
    /// one from its tree) and when sd-bus refused a value.
    package func write(to writer: BusReplyWriter) -> Bool {
        switch self {
        case .value: return false
        case .itemLists(let unlocked, let locked): return writer.objectPaths(unlocked) && writer.objectPaths(locked)
        case .items(let paths): return writer.objectPaths(paths)
        case .secrets(let entries):
            guard writer.open(.array, "{o(oayays)}") else { return false }
            for entry in entries {
                guard writer.open(.dictEntry, "o(oayays)"), writer.objectPath(entry.path), entry.secret.write(to: writer),
                      writer.close() else { return false }
            }
            return writer.close()
        case .secret(let secret): return secret.write(to: writer)
        }
    }
}
