// Completing a Secret Service prompt as the spec says: a call that may need the user
// (CreateItem, Item.Delete, Unlock, Lock, CreateCollection) answers with the path of a Prompt
// object instead of its result. The client subscribes to the prompt's Completed signal (a
// match on the sd-bus connection), calls
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
import KeygateCore
internal import CSDBus
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

    /// What the waiting loop learns: filled in by the Completed signal while the loop processes the bus.
    final class Wait {
        var completed = false
        var dismissed = false
        var result: BusValue?
    }
}

extension SecretServiceConnection {
    /// Completes the prompt at `path` (a reply's prompt path; "/" means none was needed, and nil
    /// is returned). Returns the prompt's result (the "v" of Completed, unboxed). `action` says
    /// what the prompt is for ("create the item"); `allowWindow` lets a window be waited for
    /// (otherwise the call's deadline is all the wait).
    func completePrompt(_ path: String, action: String, _ deadline: ServiceDeadline, allowWindow: Bool = true,
                        windowLimit: Duration = SecretServicePrompt.windowLimit) throws -> BusValue? {
        guard path != "/", !path.isEmpty else { return nil }
        // Debug builds only (a test hook): read any prompt as "locked", as a client that never
        // completes prompts does, so the tests can prove doctor catches a provider that prompts.
        if environment.testHooks.refusePrompts {
            throw SecretServiceFailure.locked(provider(deadline))
        }
        let bus = try connection(deadline)
        // Asked before the wait holds the connection: every message below names it.
        let provider = self.provider(deadline)
        let outcome = bus.lock.withLock { _ in
            waitForPrompt(path, on: bus.pointer, deadline, allowWindow: allowWindow, windowLimit: windowLimit,
                          provider: provider, action: action)
        }
        switch outcome {
        case .completed(let wait):
            if wait.dismissed {
                throw KeychainError.userCanceled("the \(provider.name) prompt to \(action) was dismissed: "
                                                 + "nothing was changed; try again and accept it")
            }
            return wait.result
        case .failed(let error):
            throw SecretServiceFailure.map(error, action: action, deadline: deadline, provider: provider,
                                           sessionBus: environment.sessionBusAddress != nil)
        case .timedOut(let waited, let windowShown):
            throw promptTimedOut(action: action, waited: waited, windowShown: windowShown, provider: provider)
        }
    }

    private enum PromptOutcome {
        case completed(SecretServicePrompt.Wait)
        case failed(BusErrorInfo)
        case timedOut(waited: Duration, windowShown: Bool)
    }

    /// Subscribes to the prompt's Completed signal, calls Prompt.Prompt and processes the bus
    /// until the signal comes or the limit passes. Runs under the connection's lock.
    private func waitForPrompt(_ path: String, on bus: OpaquePointer, _ deadline: ServiceDeadline, allowWindow: Bool,
                               windowLimit: Duration, provider: SecretServiceProvider, action: String) -> PromptOutcome {
        let wait = SecretServicePrompt.Wait()
        // Subscribed before Prompt is called, so a Completed sent at once is never missed. The
        // match is removed (its slot released) before `wait` goes.
        var match: OpaquePointer?
        let subscribed = sd_bus_match_signal(bus, &match, nil, path, Self.promptInterface, "Completed", promptCompleted,
                                             Unmanaged.passUnretained(wait).toOpaque())
        if subscribed < 0 { return .failed(.local(subscribed)) }
        defer { _ = sd_bus_slot_unref(match) }
        let call = ReplyBatch(["()"])
        let clock = ContinuousClock()
        let slot = ReplySlot(batch: call, index: 0, expires: clock.now.advanced(by: deadline.limit))
        defer { slot.release() }
        var made: OpaquePointer?
        var r = sd_bus_message_new_method_call(bus, &made, Self.busName, path, Self.promptInterface, "Prompt")
        guard r >= 0, let message = made else { return .failed(.local(r < 0 ? r : -ENOMEM)) }
        r = BusMessage.append(arguments: Variant.tuple([Variant.string("")]), to: message)
        var handle: OpaquePointer?
        if r >= 0 {
            r = sd_bus_call_async(bus, &handle, message, replyArrived, Unmanaged.passUnretained(slot).toOpaque(),
                                  deadline.microseconds)
        }
        slot.handle = handle
        _ = sd_bus_message_unref(message)
        if r < 0 { return .failed(.local(r)) }

        var windowShown = false
        // `windowLimit` is the whole wait, the call's deadline included: the wait stated is the
        // wait that happens (a window counted from after the deadline measures 125-130 s for a
        // stated 120 s).
        let started = clock.now
        var limit = deadline.limit
        var end = started.advanced(by: limit)
        while !wait.completed {
            if call.pending == 0, let error = call.errors[0] { return .failed(error) }
            if clock.now >= end {
                // The first limit passed: a window is waiting, if one can be shown at all.
                guard allowWindow, environment.hasDisplay || provider.showsItsOwnWindows, !windowShown else { break }
                windowShown = true
                limit = max(windowLimit, deadline.limit)
                end = started.advanced(by: limit)
                if let notice = SecretServicePrompt.windowNotice.withLock({ $0 }) {
                    let left = max(clock.now.duration(to: end), .zero)
                    notice("keygate: a \(provider.name) window is waiting for your answer (to \(action)); "
                           + "waiting up to \(ServiceDeadline(left).limitText) more")
                }
                continue
            }
            if let failed = process(bus, until: end, clock) { return .failed(failed) }
        }
        // The Prompt call's own reply (it usually came before the signal): collected, so its
        // slot is done with before it goes.
        while wait.completed, call.pending > 0, clock.now < end {
            if process(bus, until: end, clock) != nil { break }
        }
        guard wait.completed else {
            // Nobody answered: take the prompt down, so no window lingers for a call that gave up.
            var dismiss: OpaquePointer?
            if sd_bus_message_new_method_call(bus, &dismiss, Self.busName, path, Self.promptInterface, "Dismiss") >= 0,
               let dismiss {
                _ = sd_bus_send(bus, dismiss, nil)
                _ = sd_bus_flush(bus)
                _ = sd_bus_message_unref(dismiss)
            }
            return .timedOut(waited: limit, windowShown: windowShown)
        }
        return .completed(wait)
    }

    /// Processes one message of `bus`, or waits for one until `end`; the failure when the
    /// connection broke.
    private func process(_ bus: OpaquePointer, until end: ContinuousClock.Instant, _ clock: ContinuousClock) -> BusErrorInfo? {
        let processed = sd_bus_process(bus, nil)
        if processed < 0 { return .local(processed) }
        if processed > 0 { return nil }
        let left = ServiceDeadline(max(clock.now.duration(to: end), .microseconds(1)))
        let waited = sd_bus_wait(bus, left.microseconds)
        if waited < 0, waited != -EINTR { return .local(waited) }
        return nil
    }

    private func promptTimedOut(action: String, waited: Duration, windowShown: Bool,
                                provider: SecretServiceProvider) -> KeychainError {
        let waitedText = ServiceDeadline(waited).limitText
        if windowShown {
            let left = provider.keepsItsWindowAfterDismiss
                ? "; Keygate withdrew the request, but \(provider.name) leaves its window open: answer it (the next command "
                    + "then goes on) or close it"
                : ""
            return .interactionNotAllowed("a \(provider.name) window waited \(waitedText) for an answer to \(action), "
                                          + "and none came: answer it on the display, then try again" + left)
        }
        if environment.hasDisplay || provider.showsItsOwnWindows {
            return .interactionNotAllowed("\(provider.name) asked for confirmation to \(action) and the prompt did not "
                                          + "complete within \(waitedText): answer its window, then try again")
        }
        return .interactionNotAllowed("\(provider.name) asked for confirmation to \(action), and with no display "
                                      + "(DISPLAY and WAYLAND_DISPLAY unset) no window can show it: "
                                      + "run this in the desktop session, or turn the confirmation off in \(provider.name)")
    }
}

/// sd_bus_message_handler_t of Completed(b dismissed, v result).
private let promptCompleted: sd_bus_message_handler_t = { message, userData, _ in
    guard let message, let userData else { return 0 }
    let wait = Unmanaged<SecretServicePrompt.Wait>.fromOpaque(userData).takeUnretainedValue()
    guard let arguments = BusMessage.arguments(of: message), arguments.childCount >= 2 else { return 0 }
    wait.dismissed = arguments.child(0)?.boolean ?? true
    wait.result = arguments.child(1)?.unboxed
    wait.completed = true
    return 0
}
