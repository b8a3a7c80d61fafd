// The application side of a PAM conversation. PAM calls `callback` (a C function)
// with its messages; this class answers them through a Prompter, keeps the last
// password typed (in locked memory) for the caller, and hands PAM calloc'd copies,
// which PAM frees. It never sets PAM_FAIL_DELAY. Delegates to CPAM and Glibc.
import KeygateCore
internal import CPAM
internal import Glibc

final class PAMConversation {
    private let prompter: any Prompter
    private let user: String
    private let reason: String?

    /// The last PAM_PROMPT_ECHO_OFF answer of the current attempt.
    private(set) var password: SecureBytes?
    /// The person canceled at a prompt during the current attempt.
    private(set) var canceled = false
    /// An error from the prompter during the current attempt (other than a cancel).
    private(set) var failure: (any Error)?
    /// How many prompts were shown, over all attempts.
    private(set) var promptCount = 0
    /// An answer reached PAM during the current attempt (it was a guess, whatever came of it).
    private(set) var answered = false

    init(prompter: any Prompter, user: String, reason: String?) {
        self.prompter = prompter
        self.user = user
        self.reason = reason
    }

    /// Forgets what the previous attempt left.
    func beginAttempt() {
        password = nil
        canceled = false
        failure = nil
        answered = false
    }

    /// The struct for pam_start. It points at `self` without retaining it: the caller
    /// keeps this object alive for as long as the PAM handle lives (PAMHandle does).
    var cStruct: pam_conv {
        pam_conv(conv: PAMConversation.callback, appdata_ptr: Unmanaged.passUnretained(self).toOpaque())
    }

    /// The prompt shown for a PAM prompt text: PAM's bare "Password: " becomes
    /// "[keygate] password for USER: "; with a reason, "[keygate] REASON\nPassword for USER: ".
    func promptText(for pamText: String) -> String {
        let bare = Self.isBarePasswordPrompt(pamText)
        if let reason, !reason.isEmpty {
            return "[keygate] \(reason)\n" + (bare ? "Password for \(user): " : pamText)
        }
        return "[keygate] " + (bare ? "password for \(user): " : pamText)
    }

    static func isBarePasswordPrompt(_ text: String) -> Bool {
        let trimmed = String(text.unicodeScalars.filter { $0 != " " && $0 != "\t" && $0 != "\n" }).lowercased()
        return trimmed == "password:" || trimmed == "password"
    }

    // MARK: the C side

    /// Linux-PAM passes an array of pointers to messages (`msg[i]`), not a pointer to an array.
    static let callback: @convention(c) (
        Int32,
        UnsafeMutablePointer<UnsafePointer<pam_message>?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>?,
        UnsafeMutableRawPointer?
    ) -> Int32 = { count, messages, responses, appdata in
        guard let messages, let responses, let appdata, count > 0, count <= PAM_MAX_NUM_MSG else { return PAM_CONV_ERR }
        let conversation = Unmanaged<PAMConversation>.fromOpaque(appdata).takeUnretainedValue()
        return conversation.respond(count: Int(count), messages: messages, responses: responses)
    }

    private func respond(count: Int,
                         messages: UnsafeMutablePointer<UnsafePointer<pam_message>?>,
                         responses: UnsafeMutablePointer<UnsafeMutablePointer<pam_response>?>) -> Int32 {
        guard let raw = calloc(count, MemoryLayout<pam_response>.stride) else { return PAM_BUF_ERR }
        let replies = raw.bindMemory(to: pam_response.self, capacity: count)
        for index in 0..<count {
            guard let message = messages[index] else {
                Self.free(replies, count: count)
                return PAM_CONV_ERR
            }
            let text = message.pointee.msg.map { String(cString: $0) } ?? ""
            switch message.pointee.msg_style {
            case PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON:
                let isPassword = message.pointee.msg_style == PAM_PROMPT_ECHO_OFF
                guard let answer = ask(promptText(for: text)), let copy = Self.cCopy(answer) else {
                    Self.free(replies, count: count)
                    return PAM_CONV_ERR
                }
                replies[index].resp = copy
                answered = true
                if isPassword { password = answer }
            case PAM_ERROR_MSG, PAM_TEXT_INFO:
                prompter.notify(text)
            default:
                Self.free(replies, count: count)
                return PAM_CONV_ERR
            }
        }
        responses.pointee = replies
        return PAM_SUCCESS
    }

    /// One answer from the prompter; nil after a cancel or an error (both recorded).
    private func ask(_ prompt: String) -> SecureBytes? {
        promptCount += 1
        do {
            guard let answer = try prompter.readSecret(prompt: prompt) else {
                canceled = true
                return nil
            }
            let hasNUL = answer.withUnsafeBytes { $0.contains(0) }
            if hasNUL {
                failure = KeychainError.param("the answer contains a NUL byte, which PAM cannot pass on: type it without Ctrl-@")
                return nil
            }
            return answer
        } catch {
            failure = error
            return nil
        }
    }

    /// A NUL-terminated malloc'd copy for PAM (which wipes and frees it).
    private static func cCopy(_ secret: SecureBytes) -> UnsafeMutablePointer<CChar>? {
        guard let raw = calloc(secret.count + 1, 1) else { return nil }
        secret.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress, bytes.count > 0 { raw.copyMemory(from: base, byteCount: bytes.count) }
        }
        return raw.bindMemory(to: CChar.self, capacity: secret.count + 1)
    }

    /// Wipes and frees a partly filled reply array (on a failed conversation PAM frees nothing).
    private static func free(_ replies: UnsafeMutablePointer<pam_response>, count: Int) {
        for index in 0..<count {
            if let answer = replies[index].resp {
                Sodium.wipe(UnsafeMutableRawBufferPointer(start: answer, count: strlen(answer)))
                Glibc.free(answer)
            }
        }
        Glibc.free(replies)
    }
}
