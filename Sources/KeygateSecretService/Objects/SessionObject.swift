// org.freedesktop.Secret.Session: a transfer session a client opened with OpenSession, bound
// to that client's connection (its unique name) and closed by Close or when the connection
// leaves the bus. `plain` carries secrets as they are (the bus is the user's own); the
// `dh-ietf1024-sha256-aes128-cbc-pkcs7` session carries them under a key agreed by
// Diffie-Hellman (SessionCipher, libcrypto), with a fresh IV for each.
import Keygate
import KeygateCore

package struct SessionObject {
    package enum Algorithm: Sendable {
        case plain
        case aes(key: SecureBytes)
    }

    package static let plainName = "plain"
    package static let dhName = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    package let id: String
    /// The unique name of the connection that opened it; no other may use it.
    package let owner: String
    package let algorithm: Algorithm

    package var path: String { ObjectPath.session(id).path }

    /// Opens a session of `algorithm` for `owner`: the session and OpenSession's output value.
    package static func open(id: String, owner: String, algorithm: String, input: BusValue) throws -> (SessionObject, BusValue) {
        switch algorithm {
        case plainName:
            return (SessionObject(id: id, owner: owner, algorithm: .plain), .string(""))
        case dhName:
            guard case .bytes(let clientKey) = input else {
                throw SecretServiceError.invalid("the \(dhName) session's input is the client's public key (ay)")
            }
            do {
                let (publicKey, key) = try SessionCipher.exchange(clientPublicKey: clientKey)
                return (SessionObject(id: id, owner: owner, algorithm: .aes(key: key)), .bytes(publicKey))
            } catch let failure as SessionCipher.Failure {
                throw SecretServiceError.invalid(failure.description)
            }
        default:
            throw SecretServiceError(SecretServiceErrorName.notSupported,
                                     "the algorithm \(algorithm) is not supported: use \(plainName) or \(dhName)")
        }
    }

    /// `secret` as this session carries it to its client.
    package func encode(_ secret: SecureBytes, contentType: String) throws -> OutgoingSecret {
        switch algorithm {
        case .plain:
            return OutgoingSecret(session: path, value: .plain(secret), contentType: contentType)
        case .aes(let key):
            do {
                let (iv, ciphertext) = try SessionCipher.encrypt(secret, key: key)
                return OutgoingSecret(session: path, value: .encrypted(iv: iv, ciphertext: ciphertext), contentType: contentType)
            } catch let failure as SessionCipher.Failure {
                throw SecretServiceError(SecretServiceErrorName.failed, failure.description)
            }
        }
    }

    /// The plaintext of a secret the client sent over this session.
    package func decode(_ wire: WireSecret) throws -> SecureBytes {
        let secret: SecureBytes
        switch algorithm {
        case .plain:
            var bytes = wire.value
            secret = try SecureBytes(consuming: &bytes)
        case .aes(let key):
            do {
                secret = try SessionCipher.decrypt(wire.value, iv: wire.parameters, key: key)
            } catch let failure as SessionCipher.Failure {
                throw SecretServiceError.invalid(failure.description)
            }
        }
        guard secret.count <= ClientItemLimits.secretBytes else {
            throw SecretServiceError.invalid("the secret is \(secret.count) bytes; the limit is \(ClientItemLimits.secretBytes): store a key or a path to the data instead")
        }
        return secret
    }
}

extension SecretServiceHost {
    func sessionCall(_ id: String, _ call: SecretServiceCall, sender: String) throws -> BusValue {
        guard let session = sessions[id], session.owner == sender else { throw SecretServiceError.noSession(ObjectPath.session(id).path) }
        guard case .closeSession = call else { throw SecretServiceError(SecretServiceErrorName.failed, "not a method of a session") }
        sessions.removeValue(forKey: id)
        return .tuple([])
    }
}
