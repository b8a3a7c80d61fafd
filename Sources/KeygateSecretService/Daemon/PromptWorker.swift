// Where a prompt's slow steps run (the PAM conversation, a pinentry, the gatekeeper): a worker
// thread, so the bus loop keeps answering every other client meanwhile. The worker touches no
// bus and no daemon state; it reports through PromptOutcomes, which the loop drains.
import Keygate
import KeygateCore
import Dispatch
import Synchronization

enum PromptWorker {
    static func run(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue.global().async(execute: body)
    }
}

/// Prompts the workers finished, waiting for the loop.
package final class PromptOutcomes: Sendable {
    private let list = Mutex<[PromptOutcome]>([])

    func add(_ outcome: PromptOutcome) { list.withLock { $0.append(outcome) } }

    func take() -> [PromptOutcome] {
        list.withLock { list in
            defer { list.removeAll() }
            return list
        }
    }
}
