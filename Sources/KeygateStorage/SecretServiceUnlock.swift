// Whether Keygate may show the Secret Service's unlock window for a locked default collection,
// as libsecret does: Service.Unlock, then the prompt it answers with (SecretServicePrompt). A
// collection that needs no password opens at Service.Unlock with no prompt, whatever this says
// (SecretServiceStore.unlockingIfAllowed). It may show one when the setting allows it
// (KEYGATE_UNLOCK_PROMPT, or the CLI's --no-unlock-prompt) and some window can be shown: a
// display in this process's environment (DISPLAY, WAYLAND_DISPLAY: for gnome-keyring's
// gcr-prompter), or a provider that shows its own (KeePassXC and kwalletd are desktop programs
// with their own display). gnome-keyring also needs its prompter (gcr-prompter,
// org.gnome.keyring.SystemPrompter) running or activatable on the bus: without it gnome-keyring
// dismisses every prompt at once, which would read as the user's cancel. Otherwise the prompt
// is dismissed, and the locked collection is errSecInteractionNotAllowed.
import KeygateCore

extension UnlockPromptSetting {
    /// Whether an unlock prompt may be started for `provider` now; `display`: whether the
    /// environment the edge passed down names one (KeygateEnvironment.hasDisplay).
    func allows(_ provider: SecretServiceProvider, display: Bool) -> Bool {
        guard self == .auto else { return false }
        return display || provider.showsItsOwnWindows
    }
}

extension SecretServiceProvider {
    /// KeePassXC and kwalletd are desktop programs: their prompts open on their own display,
    /// whatever this process's environment says.
    var showsItsOwnWindows: Bool { self == .keePassXC || self == .kWallet }

    /// KeePassXC 2.7.4 and kwalletd5 5.103 answer Prompt.Dismiss with Completed(dismissed) but
    /// leave their unlock window on screen; gnome-keyring 42.1 takes gcr-prompter's down
    /// (measured: ProviderMatrix, docs/DECISIONS.md). The message says when a window stays.
    var keepsItsWindowAfterDismiss: Bool { self == .keePassXC || self == .kWallet }
}

extension SecretServiceConnection {
    /// gnome-keyring's prompter: the bus name gcr-prompter takes.
    static let gnomePrompterName = "org.gnome.keyring.SystemPrompter"

    /// Whether `provider` can show an unlock prompt on this bus: gnome-keyring only when its
    /// prompter runs or can be activated; the others show their own windows.
    func canPrompt(_ provider: SecretServiceProvider, _ deadline: ServiceDeadline) -> Bool {
        guard provider == .gnomeKeyring else { return true }
        guard let bus = try? connection(deadline) else { return false }
        let ask: (String, BusValue?, String) -> BusValue? = { method, arguments, replyType in
            let call = ServiceMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                         interface: "org.freedesktop.DBus", method: method, arguments: arguments,
                                         replyType: replyType, action: "look for gnome-keyring's prompter")
            guard let result = self.exchange([call], deadline, on: bus).first, case .success(let reply) = result else {
                return nil
            }
            return reply
        }
        if ask("NameHasOwner", Variant.tuple([Variant.string(Self.gnomePrompterName)]), "(b)")?.child(0)?.boolean == true {
            return true
        }
        let activatable = ask("ListActivatableNames", nil, "(as)")?.child(0)?.strings ?? []
        return activatable.contains(Self.gnomePrompterName)
    }
}
