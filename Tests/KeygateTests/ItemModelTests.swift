@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import XCTest

final class ItemModelTests: XCTestCase {
    func test_canonicalBytes_differ_whenFieldsShiftBetweenServiceAndAccount() {
        let a = ItemIdentity.generic(service: "ab", account: "c")
        let b = ItemIdentity.generic(service: "a", account: "bc")
        XCTAssertNotEqual(a.canonicalBytes, b.canonicalBytes, "length prefixes keep fields apart")
    }

    /// The bytes every sealed blob is bound to: a change to how they are made must not change them.
    func test_canonicalBytes_areTheStoredFormat() {
        var expected = Array("keygate.identity.v1".utf8)
        func field(_ text: String) {
            let bytes = Array(text.utf8)
            let n = UInt32(bytes.count)
            expected += [UInt8(n >> 24), UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)] + bytes
        }
        field(ItemClass.genericPassword.rawValue)
        field(ItemField.service.attributeName)
        field("sérvice ✓")
        field(ItemField.account.attributeName)
        field("")
        XCTAssertEqual(ItemIdentity.generic(service: "sérvice ✓", account: "").canonicalBytes, expected)
    }

    /// A Secret Service client's item is sealed to its uid as lower-case hex, high nibble first.
    func test_clientSealIdentity_isTheUidInLowerCaseHex() {
        let identity = KeychainOperations.clientSealIdentity([0x00, 0x0f, 0xa5, 0xff, 0x10, 0x9c])
        XCTAssertEqual(identity.account, "000fa5ff109c")
        XCTAssertEqual(identity.service, "org.freedesktop.secrets")
        XCTAssertEqual(KeychainOperations.clientSealIdentity([]).account, "")
    }

    func test_canonicalBytes_differ_betweenClasses() {
        let g = ItemIdentity.generic(service: "example.com", account: "u")
        let i = ItemIdentity.internet(server: "example.com", account: "u")
        XCTAssertNotEqual(g.canonicalBytes, i.canonicalBytes)
    }

    func test_exactQuery_matchesOnlyThatIdentity() {
        let id = ItemIdentity.internet(server: "h", account: "u", protocol: .https, port: 443, path: "/p")
        let q = ItemQuery(exactly: id)
        XCTAssertTrue(q.matches(ItemAttributes(identity: id)))
        var other = id
        other.port = 8443
        XCTAssertFalse(q.matches(ItemAttributes(identity: other)))
        var noProto = id
        noProto.protocol = nil
        XCTAssertFalse(q.matches(ItemAttributes(identity: noProto)))
    }

    func test_exactIdentity_isTheIdentity_ofAnExactQuery_ofEitherClass() {
        let generic = ItemIdentity.generic(service: "s", account: "a")
        let internet = ItemIdentity.internet(server: "h", account: "u", protocol: .https, port: 443, path: "/p",
                                             securityDomain: "realm", authenticationType: .htmlForm)
        let bare = ItemIdentity.internet(server: "h", account: "u")
        XCTAssertEqual(ItemQuery(exactly: generic).exactIdentity, generic)
        let twin = ItemIdentity.generic(service: "s", account: "a", synchronizable: true)
        XCTAssertEqual(ItemQuery(exactly: twin).exactIdentity, twin, "synchronizable is part of the key")
        XCTAssertNotEqual(twin, generic)
        XCTAssertEqual(twin.canonicalBytes, ItemIdentity.generic(service: "s", account: "a").canonicalBytes,
                       "twins share the sealed name: blobs stored before the flag joined the key still open")
        XCTAssertEqual(ItemIdentity.generic(service: "s", account: "a").storeKey, ItemIdentity.generic(service: "s", account: "a").canonicalBytes)
        XCTAssertNotEqual(twin.storeKey, twin.canonicalBytes, "the store key tells twins apart")
        XCTAssertEqual(ItemQuery(exactly: internet).exactIdentity, internet)
        // No protocol is stored as the empty one: the identity found has the same canonical bytes.
        XCTAssertEqual(ItemQuery(exactly: bare).exactIdentity?.canonicalBytes, bare.canonicalBytes)
    }

    func test_exactIdentity_isNil_forAQueryThatSetsLessOrMore() {
        XCTAssertNil(ItemQuery(itemClass: .genericPassword, service: "s").exactIdentity, "no account")
        XCTAssertNil(ItemQuery(service: "s", account: "a").exactIdentity, "no class")
        var labelled = ItemQuery(exactly: .generic(service: "s", account: "a"))
        labelled.label = "l"
        XCTAssertNil(labelled.exactIdentity, "a label narrows the match: not the identity alone")
        var eitherTwin = ItemQuery(exactly: .generic(service: "s", account: "a"))
        eitherTwin.synchronizable = nil
        XCTAssertNil(eitherTwin.exactIdentity, "kSecAttrSynchronizableAny matches two items: not one key")
        var serverToo = ItemQuery(exactly: .generic(service: "s", account: "a"))
        serverToo.server = "h"
        XCTAssertNil(serverToo.exactIdentity, "a generic password has no server")
        XCTAssertNil(ItemQuery(itemClass: .internetPassword, account: "u", server: "h").exactIdentity,
                     "an internet query without the rest of the key is a search")
    }

    func test_protocolNames_mapToAppleCodes() {
        XCTAssertEqual(InternetProtocol(name: "https"), .https)
        XCTAssertEqual(InternetProtocol(name: "htps"), .https)
        XCTAssertEqual(InternetProtocol(name: "ssh")?.rawValue, "ssh ")
        XCTAssertEqual(InternetProtocol(name: "xyz")?.rawValue, "xyz ")
        XCTAssertNil(InternetProtocol(name: "toolong"))
    }

    func test_accessibility_acceptsAppleConstantNames() {
        XCTAssertEqual(Accessibility(name: "kSecAttrAccessibleAfterFirstUnlock"), .afterFirstUnlock)
        XCTAssertEqual(Accessibility(name: "when-unlocked"), .whenUnlocked)
        XCTAssertNil(Accessibility(name: "sometimes"))
        XCTAssertTrue(Accessibility.afterFirstUnlock.survivesLock)
        XCTAssertFalse(Accessibility.whenUnlocked.survivesLock)
    }

    func test_keychainOptions_areImmutableCopies() {
        let base = Keychain(service: "vpn")
        let labelled = base.label("VPN").accessibility(.afterFirstUnlock)
        XCTAssertNil(base.label)
        XCTAssertEqual(base.accessibility, .whenUnlocked)
        XCTAssertEqual(labelled.label, "VPN")
        XCTAssertEqual(labelled.accessibility, .afterFirstUnlock)
        XCTAssertEqual(base.identity("alice"), .generic(service: "vpn", account: "alice"))
        let web = Keychain(server: "example.com", protocol: .https, port: 443)
        XCTAssertEqual(web.identity("bob").itemClass, .internetPassword)
        XCTAssertEqual(web.scopeQuery().server, "example.com")
        XCTAssertEqual(web.scopeQuery().port, 443)
    }
}
