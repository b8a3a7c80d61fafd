// Fuzz harness for the decoders of what Keygate reads back from storage and the kernel
// keyring: sealed blobs (SealedBlob, scheme 1), access-controlled blobs (GatedBlob,
// scheme 2), cached-key payloads (KeyCachePayload), and an item's stored attributes
// (ItemAttributeCodec, Base64, AccessControl's attribute text). The whole input is the
// blob. Invariants: every refusal is a KeychainError .decode with a message; a blob from
// a future format says "upgrade keygate"; a blob that opens for item A never opens for
// item B (a blob moved to another item fails); what opens re-seals and opens the same.
// Fixed keys, so the seed corpus can hold real blobs: KEYGATE_FUZZ_MAKE_SEEDS=DIR writes
// them (see Fuzz/README.md). Delegates everything to the library.
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import Glibc

enum BlobFuzz {
    static func key(_ byte: UInt8) -> SecureBytes {
        var bytes = [UInt8](repeating: byte, count: 32)
        return (try? SecureBytes(consuming: &bytes)) ?? { abort() }()
    }
    static func pair(_ byte: UInt8) -> BoxKeyPair { (try? BoxKeyPair.derive(seed: key(byte))) ?? { abort() }() }

    nonisolated(unsafe) static let classKey = key(0x11)
    static let classPair = pair(0x22)
    static let presencePair = pair(0x33)
    static let currentSetPair = pair(0x44)
    static let itemA = ItemIdentity.generic(service: "fuzz-service", account: "fuzz-account")
    static let itemB = ItemIdentity.generic(service: "fuzz-service", account: "other-account")

    static func bytes(_ s: SecureBytes) -> [UInt8] { s.withUnsafeBytes { Array($0) } }

    /// Runs `body`; a thrown error must be a KeychainError of code `.decode` with a message.
    static func decodeOrRefuse<T>(_ what: String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch let error as KeychainError {
            require(error.code == .decode, "\(what) refused with \(error.code), not .decode: \(error.message)")
            require(!error.message.isEmpty, "\(what) refused without a message")
            return nil
        } catch {
            require(false, "\(what) threw a non-Keychain error: \(error)")
            return nil
        }
    }

    static func seeds() throws -> [(String, [UInt8])] {
        var secret = Array("correct horse battery staple".utf8)
        let s = try SecureBytes(consuming: &secret)
        let presence = GateRecipient(kind: .presence, publicKey: presencePair.publicKey)
        let currentSet = GateRecipient(kind: .currentSet, publicKey: currentSetPair.publicKey)
        let sealed = try SealedBlob.seal(s, identity: itemA, accessibility: .whenUnlocked, classKey: classKey)
        var future = sealed
        future[3] = SealedBlob.currentVersion + 1
        return [
            ("sealed-when-unlocked", sealed),
            ("sealed-this-device", try SealedBlob.seal(s, identity: itemA, accessibility: .whenUnlockedThisDeviceOnly, classKey: classKey)),
            ("sealed-future-version", future),
            ("gated-no-gate", try GatedBlob.seal(s, identity: itemA, accessibility: .whenUnlocked, accessControl: 0,
                                                 classKey: classPair.publicKey, gates: [], combination: .any)),
            ("gated-presence", try GatedBlob.seal(s, identity: itemA, accessibility: .whenUnlocked, accessControl: 1,
                                                  classKey: classPair.publicKey, gates: [presence], combination: .any)),
            ("gated-or", try GatedBlob.seal(s, identity: itemA, accessibility: .afterFirstUnlock, accessControl: 1 << 14 | 1 << 4 | 1 << 3,
                                            classKey: classPair.publicKey, gates: [presence, currentSet], combination: .any)),
            ("gated-and", try GatedBlob.seal(s, identity: itemA, accessibility: .whenUnlocked, accessControl: 1 << 15 | 1 << 4 | 1 << 3,
                                             classKey: classPair.publicKey, gates: [presence, currentSet], combination: .all)),
            ("cache-payload", bytes(try KeyCachePayload.encode(key: classKey, expiresAt: 1_900_000_000))),
            ("not-a-blob", Array("hunter2".utf8)),
            ("attribute-base64", Array("Zm9vYmFy".utf8)),
            ("attribute-access", Array("user-presence,device-passcode;or".utf8)),
            ("attributes-internet", Array("keygate:class=inet\nserver=example.org\naccount=alice\nport=443\nprotocol=htps\nkeygate:access=current-set\ngeneric=AAEC".utf8)),
        ]
    }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzBlobInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    guard let dir = getenv("KEYGATE_FUZZ_MAKE_SEEDS").map({ String(cString: $0) }) else { return 0 }
    do {
        for (name, blob) in try BlobFuzz.seeds() {
            guard let file = fopen(dir + "/" + name, "wb") else { abort() }
            _ = blob.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
            fclose(file)
        }
    } catch {
        fputs("cannot make seeds: \(error)\n", stderr)
        exit(1)
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBlobDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let blob = FuzzInput.all(data, size)
    let header = BlobFuzz.decodeOrRefuse("SealedBlob.header") { try SealedBlob.header(of: blob) }
    FuzzStats.record(refused: header == nil)
    if let header {
        require(header.version >= 1 && header.version <= SealedBlob.currentVersion, "accepted format \(header.version)")
        require(header.scheme == SealedBlob.schemeClassKey || header.scheme == SealedBlob.schemeSealedBox, "accepted scheme \(header.scheme)")
    } else if blob.count >= SealedBlob.headerLength, blob.starts(with: SealedBlob.magic), blob[3] > SealedBlob.currentVersion {
        do { _ = try SealedBlob.header(of: blob) } catch let error as KeychainError {
            require(error.message.contains("upgrade keygate"), "a future format is not told to upgrade: \(error.message)")
        } catch { require(false, "unexpected error \(error)") }
    }

    // Scheme 1.
    if let opened = BlobFuzz.decodeOrRefuse("SealedBlob.open", { try SealedBlob.open(blob, identity: BlobFuzz.itemA, classKey: BlobFuzz.classKey) }) {
        require(BlobFuzz.decodeOrRefuse("SealedBlob.open moved") {
            try SealedBlob.open(blob, identity: BlobFuzz.itemB, classKey: BlobFuzz.classKey)
        } == nil, "a sealed blob opened for another item")
        if let accessibility = header?.accessibility, opened.count <= SealedBlob.maxSecretLength,
           let again = try? SealedBlob.seal(opened, identity: BlobFuzz.itemA, accessibility: accessibility, classKey: BlobFuzz.classKey),
           let reopened = try? SealedBlob.open(again, identity: BlobFuzz.itemA, classKey: BlobFuzz.classKey) {
            require(BlobFuzz.bytes(reopened) == BlobFuzz.bytes(opened), "re-sealed secret differs")
        }
    }

    // Scheme 2.
    let keys = [BlobFuzz.classPair, BlobFuzz.presencePair, BlobFuzz.currentSetPair]
    if let gated = BlobFuzz.decodeOrRefuse("GatedBlob.header", { try GatedBlob.header(of: blob) }) {
        require(gated.gateSlots.count <= GatedBlob.maxGates, "more gates than allowed")
        require(gated.length <= blob.count, "header longer than the blob")
        if BlobFuzz.decodeOrRefuse("GatedBlob.open", { try GatedBlob.open(blob, identity: BlobFuzz.itemA, keys: keys) }) != nil {
            require(BlobFuzz.decodeOrRefuse("GatedBlob.open moved") {
                try GatedBlob.open(blob, identity: BlobFuzz.itemB, keys: keys)
            } == nil, "a gated blob opened for another item")
        }
        // Without the gate keys, a gated blob never opens.
        if !gated.gateSlots.isEmpty {
            require(BlobFuzz.decodeOrRefuse("GatedBlob.open class only") {
                try GatedBlob.open(blob, identity: BlobFuzz.itemA, keys: [BlobFuzz.classPair])
            } == nil, "a gated blob opened with the class key alone")
        }
    }

    // The kernel-keyring payload.
    blob.withUnsafeBytes { raw in
        let decoded = KeyCachePayload.decode(raw)
        require((decoded == nil) == (raw.count < KeyCachePayload.headerSize), "cache payload accepted/refused wrongly")
        if let decoded { require(decoded.key.count == raw.count - KeyCachePayload.headerSize, "cache key length") }
    }

    // Stored attribute text.
    let text = String(decoding: blob, as: UTF8.self)
    if let decoded = Base64Text.decode(text) {
        require(Base64Text.decode(Base64Text.encode(decoded)) == decoded, "base64 does not round-trip: \(text)")
    }
    if let control = try? AccessControl(attributeValue: text) {
        require((try? AccessControl(attributeValue: control.attributeValue)) == control, "access attribute does not round-trip: \(text)")
    }
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false)
    var attrs: [String: String] = [:]
    for field in fields.prefix(24) {
        let parts = field.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        attrs[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
    }
    if let item = ItemAttributeCodec.decode(attrs, label: text, created: 0, modified: UInt64(size)) {
        _ = ItemAttributeCodec.encode(item)
        _ = item.identity.canonicalBytes
    }
    return 0
}
