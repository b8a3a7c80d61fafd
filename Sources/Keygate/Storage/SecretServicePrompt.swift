// Completing a Secret Service prompt as the spec says: a call that may need the user
// (CreateItem, Item.Delete, Unlock, Lock, CreateCollection) answers with the path of a Prompt
// object instead of its result. The client subscribes to the prompt's Completed signal, calls
// Prompt.Prompt(window-id ""), and takes the result from the signal: (dismissed, result).
// KeePassXC answers every CreateItem and Item.Delete so, even when it shows nothing.
//
// How long Keygate waits: a prompt that shows no window completes within the call's own
// deadline (ServiceDeadline). One still open after it is taken to be a window on the display
// (an unlock dialog, KeePassXC's delete confirmation): it is waited for up to
// `windowLimit` (documented in keygate(1), SECRET SERVICE PROMPTS, and docs/DECISIONS.md), and `windowNotice` tells the user a window is
// waiting. With no display (and a provider that has none of its own: gnome-keyring) nobody can
// answer one, so the call's deadline is all the wait.
// A prompt not answered in time is dismissed (Prompt.Dismiss) and reported; dismissed=true is
// the user's cancel (errSecUserCanceled).
internal import CGio
internal import Glibc
import Synchronization

public enum SecretServicePrompt {
    /// How long a prompt shown as a window is waited for, at most.
    public static let windowLimit: Duration = .seconds(120)

    /// Told, once per prompt, that a window is waiting for the user (the CLI prints it to stderr).
    /// The text never holds a secret.
    static let windowNotice = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Sets what is told when a window is waiting (the CLI: a line on stderr).
    public static func onWindowWait(_ notice: @escaping @Sendable (String) -> Void) {
        windowNotice.withLock { $0 = notice }
    }

    /// Whether a window can be shown: DISPLAY or WAYLAND_DISPLAY is set.
    static var hasDisplay: Bool {
        for name in ["DISPLAY", "WAYLAND_DISPLAY"] {
            if let value = getenv(name), value.pointee != 0 { return true }
        }
        return false
    }

    /// What the waiting loop learns: filled in by the signal and the timer on this thread's context.
    final class Wait {
        var completed = false
        var dismissed = false
        var result: GVariantRef?
        var timedOut = false
    }
}

extension SecretServiceConnection {
    /// Completes the prompt at `path` (a reply's prompt path; "/" means none was needed, and nil
    /// is returned). Returns the prompt's result (the "v" of Completed, unboxed). `action` says
    /// what the prompt is for ("create the item"); `allowWindow` lets a window be waited for
    /// (otherwise the call's deadline is all the wait).
    func completePrompt(_ path: String, action: String, _ deadline: ServiceDeadline, allowWindow: Bool = true,
                        windowLimit: Duration = SecretServicePrompt.windowLimit) throws -> GVariantRef? {
        guard path != "/", !path.isEmpty else { return nil }
        #if KEYGATE_TEST_HOOKS
        // Debug builds only: behave as Keygate did before it completed prompts (a prompt meant
        // "locked"), so the tests can prove doctor catches a provider that prompts.
        if let raw = getenv("KEYGATE_TEST_REFUSE_PROMPTS"), String(cString: raw) == "1" {
            throw SecretServiceFailure.locked(provider(deadline))
        }
        #endif
        let bus = try connection(deadline)
        guard let context = g_main_context_new() else {
            throw KeychainError.notAvailable("could not allocate memory for a Secret Service prompt: free some memory, then try again")
        }
        g_main_context_push_thread_default(context)
        let wait = SecretServicePrompt.Wait()
        // Subscribed before Prompt is called, so a Completed sent at once is never missed. The
        // subscription holds its own reference to `wait`, released by GDBus when it is dropped.
        let subscription = g_dbus_connection_signal_subscribe(
            bus.pointer, nil, Self.promptInterface, "Completed", path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
            promptCompleted, Unmanaged.passRetained(wait).toOpaque(), releaseWait)
        let call = ReplyBatch(count: 1)
        g_dbus_connection_call(bus.pointer, Self.busName, path, Self.promptInterface, "Prompt",
                               Variant.tuple([Variant.string("")]), nil, G_DBUS_CALL_FLAGS_NONE, deadline.milliseconds,
                               nil, replyArrived, Unmanaged.passRetained(ReplySlot(batch: call, index: 0)).toOpaque())
        var windowNoticeGiven = false
        var limit = deadline.limit
        var timer = startTimer(limit, wait, context)
        guard timer != nil else {
            // Without its timer the wait could last forever: give up at once instead.
            finish(subscription, nil, context, bus)
            throw KeychainError.notAvailable("could not allocate memory for a Secret Service prompt: free some memory, then try again")
        }
        while !wait.completed {
            if call.pending == 0, let error = call.errors[0] {
                finish(subscription, timer, context, bus)
                throw SecretServiceFailure.map(error, action: action, deadline: deadline, provider: provider(deadline))
            }
            if wait.timedOut {
                // The first limit passed: a window is waiting, if one can be shown at all.
                let provider = self.provider(deadline)
                guard allowWindow, SecretServicePrompt.hasDisplay || provider.showsItsOwnWindows, !windowNoticeGiven else { break }
                windowNoticeGiven = true
                let name = provider.name
                if let notice = SecretServicePrompt.windowNotice.withLock({ $0 }) {
                    notice("keygate: a \(name) window is waiting for your answer (to \(action)); "
                           + "waiting up to \(ServiceDeadline(windowLimit).limitText)")
                }
                wait.timedOut = false
                limit = windowLimit
                if let old = timer { g_source_destroy(old); g_source_unref(old) }
                timer = startTimer(limit, wait, context)
                continue
            }
            g_main_context_iteration(context, 1)
        }
        // The Prompt call's own reply (it usually came before the signal): collected, so its
        // callback runs on this context before the context goes.
        while wait.completed, call.pending > 0, !wait.timedOut { g_main_context_iteration(context, 1) }
        finish(subscription, timer, context, bus)
        guard wait.completed else {
            // Nobody answered: take the prompt down, so no window lingers for a call that gave up.
            g_dbus_connection_call(bus.pointer, Self.busName, path, Self.promptInterface, "Dismiss", nil, nil,
                                   G_DBUS_CALL_FLAGS_NONE, deadline.milliseconds, nil, nil, nil)
            throw promptTimedOut(action: action, waited: limit, windowShown: windowNoticeGiven, deadline)
        }
        if wait.dismissed {
            throw KeychainError.userCanceled("the \(provider(deadline).name) prompt to \(action) was dismissed: "
                                             + "nothing was changed; try again and accept it")
        }
        return wait.result
    }

    private func startTimer(_ limit: Duration, _ wait: SecretServicePrompt.Wait, _ context: OpaquePointer) -> OpaquePointer? {
        guard let source = g_timeout_source_new(UInt32(ServiceDeadline(limit).milliseconds)) else { return nil }
        g_source_set_callback(source, promptTimerFired, Unmanaged.passRetained(wait).toOpaque(), releaseWait)
        _ = g_source_attach(source, context)
        return source
    }

    private func finish(_ subscription: UInt32, _ timer: OpaquePointer?, _ context: OpaquePointer, _ bus: BusConnection) {
        g_dbus_connection_signal_unsubscribe(bus.pointer, subscription)
        if let timer {
            g_source_destroy(timer)
            g_source_unref(timer)
        }
        // Lets the context run what the unsubscription queued (the release of `wait`).
        while g_main_context_iteration(context, 0) != 0 {}
        g_main_context_pop_thread_default(context)
        g_main_context_unref(context)
    }

    private func promptTimedOut(action: String, waited: Duration, windowShown: Bool,
                                _ deadline: ServiceDeadline) -> KeychainError {
        let provider = self.provider(deadline)
        let waitedText = ServiceDeadline(waited).limitText
        if windowShown {
            return .interactionNotAllowed("a \(provider.name) window waited \(waitedText) for an answer to \(action), "
                                          + "and none came: answer it on the display, then try again")
        }
        if SecretServicePrompt.hasDisplay || provider.showsItsOwnWindows {
            return .interactionNotAllowed("\(provider.name) asked for confirmation to \(action) and the prompt did not "
                                          + "complete within \(waitedText): answer its window, then try again")
        }
        return .interactionNotAllowed("\(provider.name) asked for confirmation to \(action), and with no display "
                                      + "(DISPLAY and WAYLAND_DISPLAY unset) no window can show it: "
                                      + "run this in the desktop session, or turn the confirmation off in \(provider.name)")
    }
}

/// GDBusSignalCallback of Completed(b dismissed, v result).
private let promptCompleted: GDBusSignalCallback = { _, _, _, _, _, parameters, userData in
    guard let userData, let parameters else { return }
    let wait = Unmanaged<SecretServicePrompt.Wait>.fromOpaque(userData).takeUnretainedValue()
    guard g_variant_n_children(parameters) >= 2 else { return }
    let arguments = GVariantRef(taking: g_variant_ref_sink(parameters))
    wait.dismissed = arguments.child(0)?.boolean ?? true
    wait.result = arguments.child(1)?.unboxed
    wait.completed = true
}

/// GSourceFunc of the prompt's timer: marks the wait timed out, once.
private let promptTimerFired: GSourceFunc = { userData in
    if let userData {
        Unmanaged<SecretServicePrompt.Wait>.fromOpaque(userData).takeUnretainedValue().timedOut = true
    }
    return 0
}

/// GDestroyNotify of the references the subscription and the timer hold.
private let releaseWait: GDestroyNotify = { userData in
    if let userData { Unmanaged<SecretServicePrompt.Wait>.fromOpaque(userData).release() }
}
