// Small secrets (keys, seeds, shares: 64 bytes or less) share locked pages instead of each
// taking its own: sodium_malloc(3) maps, guards and mlocks pages for every allocation (about
// ten system calls with the free), and a gated read makes a dozen of them. The arena takes
// its chunks from sodium_malloc, so they are locked, kept out of core dumps and fenced by
// guard pages like any sodium_malloc allocation; a slot is zeroed when it is given back. What it gives up is the
// guard page right after each small secret: an overflow out of one slot lands in the next
// slot of the same locked chunk, not in a fault. Larger buffers (passwords, plaintexts) keep
// their own sodium_malloc allocation.
internal import CSodium
import Synchronization

enum LockedArena {
    /// The largest secret a slot holds.
    static let slotBytes = 64
    /// Slots per chunk: 16 KiB of locked memory each.
    static let slotsPerChunk = 256
    /// At most this many chunks (1 MiB locked); beyond it allocations fall back to sodium_malloc.
    static let maxChunks = 64

    /// Addresses, not pointers, so the state is Sendable behind its Mutex.
    private struct State {
        var chunks = 0
        var free: [UInt] = []
    }

    private static let state = Mutex(State())

    /// A zeroed slot for `count` bytes, or nil (too large, or no locked memory left for a chunk).
    static func allocate(_ count: Int) -> UnsafeMutableRawPointer? {
        guard count > 0, count <= slotBytes else { return nil }
        let address = state.withLock { state -> UInt? in
            if state.free.isEmpty {
                guard state.chunks < maxChunks, let chunk = sodium_malloc(slotBytes * slotsPerChunk) else { return nil }
                sodium_memzero(chunk, slotBytes * slotsPerChunk)
                state.chunks += 1
                let base = UInt(bitPattern: chunk)
                state.free.reserveCapacity(slotsPerChunk)
                for index in stride(from: slotsPerChunk - 1, through: 0, by: -1) { state.free.append(base + UInt(index * slotBytes)) }
            }
            return state.free.popLast()
        }
        return address.flatMap { UnsafeMutableRawPointer(bitPattern: $0) }
    }

    /// Zeroes the slot and takes it back.
    static func release(_ slot: UnsafeMutableRawPointer) {
        sodium_memzero(slot, slotBytes)
        let address = UInt(bitPattern: slot)
        state.withLock { $0.free.append(address) }
    }
}
