// A finger reopens a locked keychain (as Touch ID unlocks an iPhone): after a password
// unlock the master key is sealed to a key of the gatekeeper's (FingerUnlockKey), and within
// the policy's window a matching finger has the gatekeeper open it again. The user's copy is
// useless without root's key; the gatekeeper decides (its window, the password's generation,
// the lockout, the match).
internal import KeygateGateWire
internal import KeygateSystemBus

extension KeyUnlocker {
    /// The master key sealed to the gatekeeper's finger-unlock key (FingerUnlockKey): the user's
    /// file, useless without root's key.
    var fingerUnlockPath: String { context.dataDirectory + "/finger-unlock" }

    /// After a password unlock: seals the master key to a new key of the gatekeeper's, so that a
    /// finger may reopen the keychain within the policy's window. Best effort: without it the
    /// password is asked, as before. A host without fprintd's storage folder is not asked.
    func armFingerUnlock(_ master: SecureBytes) {
        guard AtomicFile.exists(FprintdProbe.storageRoot(context.environment)), let publicKey = try? gate.armFingerUnlock() else { return }
        guard publicKey.count == BoxKeyPair.publicKeyBytes, let sealed = try? SealedBox.seal(master, to: publicKey) else {
            try? AtomicFile.remove(fingerUnlockPath)   // turned off: no finger enrolled, or the policy's finger-unlock = 0
            return
        }
        try? AtomicFile.write(sealed, to: fingerUnlockPath, mode: 0o600)
    }

    /// The master key reopened by a finger (the gatekeeper decides: its window, the password's
    /// generation, the lockout, the match), cached as an unlock's; nil when the finger cannot
    /// reopen it now (then the password is asked, after a word when a finger was refused). The
    /// key is checked against keys.json's class public key before it is used.
    func openWithFinger() throws -> SecureBytes? {
        guard !neverPrompt, authContext?.interactionNotAllowed != true, keyStore.hasLoginProtector,
              let sealed = try? AtomicFile.read(fingerUnlockPath, maxBytes: 256), sealed.count == GateRequest.sealedMasterKeyBytes
        else { return nil }
        do {
            let master = try gate.fingerUnlock(sealed, reason: promptReason(for: .unlock))
            guard let keys = try PublicKeys.load(directory: context.dataDirectory),
                  let recorded = keys.classKey(.whenUnlocked),
                  try ClassKeys.keyPair(masterKey: master, for: .whenUnlocked).publicKey == recorded else {
                try? AtomicFile.remove(fingerUnlockPath)
                return nil
            }
            cacheUnlocked(master)
            return master
        } catch let error as KeychainError where error.code == .userCanceled {
            throw error
        } catch let error as KeychainError {
            switch error.code {
            case .authFailed: prompter.notify("The finger did not reopen the keychain: use your password instead.")
            case .itemNotFound:
                // Root keeps nothing that opens it any more: said once, then the copy goes.
                try? AtomicFile.remove(fingerUnlockPath)
                prompter.notify(error.message.prefix(1).uppercased() + error.message.dropFirst() + ".")
            default: break
            }
            return nil
        }
    }
}
