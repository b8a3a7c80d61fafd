// KeychainError's internal reason: the places that tell errors of one code apart (a stale
// Secret Service session, a locked collection, a TPM that refuses, a password that does not
// open the login protector) branch on the reason set where the error is made, so rewording
// a message, or a message that happens to share a word, changes nothing.
import XCTest
@testable import Keygate
@testable import KeygateGateWire
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class ErrorReasonTests: XCTestCase {
    private let deadline = ServiceDeadline(.seconds(5))

    private func mapped(_ name: String?, _ message: String) -> KeychainError {
        SecretServiceFailure.map(BusErrorInfo(name: name, message: message, errno: 0), action: "read item secrets",
                                 deadline: deadline, provider: .gnomeKeyring)
    }

    func test_staleSession_isTheNoSessionErrorName_whateverTheDaemonSays() {
        let stale = mapped(SecretServiceFailure.noSessionErrorName, "The session does not exist")
        XCTAssertTrue(SecretServiceStore.isStaleSession(stale), stale.message)
        let reworded = mapped(SecretServiceFailure.noSessionErrorName, "gone")
        XCTAssertTrue(SecretServiceStore.isStaleSession(reworded), reworded.message)
        XCTAssertFalse(reworded.message.contains("session"), "the reworded message no longer names a session")
    }

    func test_sessionBusMessages_areNotStaleSessions() {
        let lost = mapped(BusErrorName.disconnected, "Connection closed")
        XCTAssertTrue(lost.message.contains("session bus"), lost.message)
        XCTAssertFalse(SecretServiceStore.isStaleSession(lost), lost.message)
        let other = mapped("org.freedesktop.DBus.Error.Failed", "the session of the user is odd")
        XCTAssertTrue(other.message.contains("session"), other.message)
        XCTAssertFalse(SecretServiceStore.isStaleSession(other), other.message)
        let noService = mapped(BusErrorName.serviceUnknown, "")
        XCTAssertFalse(SecretServiceStore.isStaleSession(noService), noService.message)
    }

    func test_lockedCollection_isByReason_notByPrefix() {
        let locked = SecretServiceFailure.locked(.gnomeKeyring)
        XCTAssertTrue(SecretServiceStore.isLockedCollection(locked))
        XCTAssertTrue(SecretServiceStore.isLockedCollection(mapped(SecretServiceFailure.lockedErrorName, "")))
        // The same words made elsewhere, without the reason, are not a locked collection.
        let lookalike = KeychainError.interactionNotAllowed(SecretServiceFailure.lockedPrefix + ": reworded")
        XCTAssertFalse(SecretServiceStore.isLockedCollection(lookalike))
        let timeout = mapped(BusErrorName.timeout, "")
        XCTAssertEqual(timeout.reason, .secretServiceTimeout)
        XCTAssertFalse(SecretServiceStore.isLockedCollection(timeout))
    }

    func test_hostKeyCheck_showsATPMRefusalAsIs_byReason() {
        let refusal = KeychainError(.notAvailable, "a reworded TPM refusal", reason: .tpmRefused)
        XCTAssertEqual(HostKeyCheck.refusedMessage(tcti: "device:/dev/tpmrm0", refusal), "a reworded TPM refusal")
        // Text that starts like a refusal but is not one is put in context.
        let other = KeychainError.decode("the TPM at the end of the file is corrupt")
        XCTAssertEqual(HostKeyCheck.refusedMessage(tcti: "device:/dev/tpmrm0", other),
                       "the host key is sealed to the TPM at device:/dev/tpmrm0, which no longer opens it: " + other.message)
    }

    func test_wrongPassword_carriesItsReason_andOtherAuthFailuresDoNot() throws {
        let store = KeyStore(directory: try makeTemporaryFolder(self) + "/share/keygate")
        let (_, recoveryKey) = try store.initialize(password: try secureBytes("right"), kdf: .testing)
        XCTAssertThrowsError(try store.unlock(password: try secureBytes("wrong"))) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .authFailed)
            XCTAssertEqual((error as? KeychainError)?.reason, .wrongPassword)
        }
        var other = recoveryKey.unprotectedCopy()
        other[0] ^= 1
        XCTAssertThrowsError(try store.unlock(recoveryKey: try SecureBytes(consuming: &other))) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .authFailed)
            XCTAssertNil((error as? KeychainError)?.reason, "a wrong recovery key is not a stale login protector")
        }
    }

    func test_equality_isCodeAndMessage_soAReplyReadBackEqualsTheErrorSent() {
        let sent = SecretServiceFailure.locked(.gnomeKeyring)
        let received = GateResult.failure(sent).keychainError
        XCTAssertEqual(received, sent)
        XCTAssertNil(received?.reason, "the reason does not cross the gatekeeper's wire")
        XCTAssertNotEqual(sent, KeychainError.interactionNotAllowed("another message"))
    }
}
