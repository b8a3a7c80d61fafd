// Async variants of the Keychain API. The work (D-Bus round trips, a PAM
// conversation, Argon2id) blocks, so it runs on a Dispatch queue outside Swift's
// cooperative pool, and the calling task suspends until it is done.
public import FoundationEssentials
import Dispatch

extension Keychain {
    private static let queue = DispatchQueue(label: "keygate.keychain", attributes: .concurrent)

    private func offPool<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { continuation in
            Keychain.queue.async {
                continuation.resume(with: Result { try body() })
            }
        }
    }

    public func set(_ value: Data, for account: String) async throws {
        try await offPool { try self.set(value, for: account) }
    }

    public func set(_ value: String, for account: String) async throws {
        try await offPool { try self.set(value, for: account) }
    }

    public func set<T: Encodable & Sendable>(_ value: T, for account: String) async throws {
        try await offPool { try self.set(value, for: account) }
    }

    public func add(_ value: Data, for account: String) async throws {
        try await offPool { try self.add(value, for: account) }
    }

    public func data(for account: String) async throws -> Data? {
        try await offPool { try self.data(for: account) }
    }

    public func string(for account: String) async throws -> String? {
        try await offPool { try self.string(for: account) }
    }

    public func decode<T: Decodable & Sendable>(_ type: T.Type, for account: String) async throws -> T? {
        try await offPool { try self.decode(type, for: account) }
    }

    public func attributes(for account: String) async throws -> ItemAttributes? {
        try await offPool { try self.attributes(for: account) }
    }

    public func contains(_ account: String) async throws -> Bool {
        try await offPool { try self.contains(account) }
    }

    public func allKeys() async throws -> [String] {
        try await offPool { try self.allKeys() }
    }

    public func remove(_ account: String) async throws {
        try await offPool { try self.remove(account) }
    }

    public func removeAll() async throws {
        try await offPool { try self.removeAll() }
    }
}
