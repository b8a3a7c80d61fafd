// A finger reopens a locked keychain (as Touch ID unlocks an iPhone): after a password
// unlock the master key is sealed to a key of the gatekeeper's (FingerUnlockKey), and within
// the policy's window a matching finger has the gatekeeper open it again. The user's copy is
// useless without root's key; the gatekeeper decides (its window, the password's generation,
// the lockout, the match). The unlock that took the password arms it in the same run of the
// gatekeeper (GateAccess.Grant); `armFingerUnlock` is the follow-up when it could not.
internal import KeygateGateWire
internal import KeygateSystemBus

enum FingerReopen {
    /// Whether a password unlock arms the finger unlock on this host: only where fprintd keeps
    /// prints (its storage folder exists); elsewhere the gatekeeper is not asked.
    static func mayArm(_ environment: KeygateEnvironment) -> Bool {
        AtomicFile.exists(FprintdProbe.storageRoot(environment))
    }

    /// What a locked keychain says when an item needs a finger and the finger cannot reopen the
    /// keychain because no password unlock armed it since the finger was enrolled.
    static let passwordFirst = "your finger can open the keychain only after you have typed your password once since enrolling it"
}

extension KeyUnlocker {
    /// The follow-up of a password unlock that could not arm the finger unlock in its own run:
    /// `fingerUnlockArm` (within the last minute of that password), then the sealed copy. Without
    /// it the password is asked, as with no finger unlock at all: a failure is an audit line, never the read's error.
    func armFingerUnlock(_ master: SecureBytes) {
        do {
            source.armFinger(master, publicKey: try gate.armFingerUnlock())
        } catch {
            audit(.unlock, detail: "the finger unlock was not armed: \(error)")
        }
    }

    /// The master key reopened by a finger (the gatekeeper decides: its window, the password's
    /// generation, the lockout, the match), held as an unlock's; nil when the finger cannot
    /// reopen it now (then the password is asked, after a word when a finger was refused). The
    /// key is checked against keys.json's class public key before it is used.
    func openWithFinger() throws -> SecureBytes? {
        guard !neverPrompt, authContext?.interactionNotAllowed != true, source.hasLoginProtector,
              let sealed = source.fingerCopy() else { return nil }
        do {
            let master = try gate.fingerUnlock(sealed, reason: promptReason(for: .unlock))
            guard try source.isThisKeychains(master) else {
                source.dropFingerCopy()
                return nil
            }
            hold(master)
            return master
        } catch let error as KeychainError where error.code == .userCanceled {
            throw error
        } catch let error as KeychainError {
            switch error.code {
            case .authFailed: prompter.notify("The finger did not reopen the keychain: use your password instead.")
            case .itemNotFound:
                // Root keeps nothing that opens it any more: said once, then the copy goes.
                source.dropFingerCopy()
                prompter.notify(error.message.prefix(1).uppercased() + error.message.dropFirst() + ".")
            default: break
            }
            return nil
        }
    }
}
