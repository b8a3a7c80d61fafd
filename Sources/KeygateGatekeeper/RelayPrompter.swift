// The gatekeeper's side of a prompt (docs/GATEKEEPER.md): PAM runs in the root helper,
// but the person is at the client's terminal, askpass or pinentry. Each PAM prompt goes
// to the client as a frame; the client answers with its own Prompter. The answer lives
// in locked memory here, as anywhere else.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

struct RelayPrompter: GatePrompter {
    let input: Int32
    let output: Int32

    func readSecret(prompt: String) throws -> SecureBytes? {
        guard GateWire.writeFrame(output, GateMessage.promptSecret(prompt).encoded()) else {
            throw KeychainError.userCanceled("the program that asked for this is gone: nothing was opened")
        }
        guard var frame = GateWire.readFrame(input), let kind = frame.first else {
            throw KeychainError.userCanceled("the program that asked for this is gone: nothing was opened")
        }
        defer { Sodium.wipe(&frame) }
        switch kind {
        case UInt8(ascii: "A"):
            var answer = Array(frame.dropFirst())
            return try SecureBytes(consuming: &answer)
        case UInt8(ascii: "C"):
            return nil
        default:
            throw KeychainError.param("the gatekeeper's caller answered a prompt with a malformed frame")
        }
    }

    func notify(_ message: String) {
        _ = GateWire.writeFrame(output, GateMessage.notice(message).encoded())
    }

    func ensureAvailable() throws {}

    func audit(_ event: AuditEvent, service: String, detail: String) {
        _ = GateWire.writeFrame(output, GateMessage.audit(event: event.rawValue, service: service, detail: detail).encoded())
    }
}
