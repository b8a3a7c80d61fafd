// Keeps alive what CoreFoundation's pointer-returning getters hand out (CFDataGetBytePtr,
// CFArrayGetValueAtIndex, CFDictionaryGetValue on a CFDictionary). On Apple the pointer
// lives as long as the container; here the containers are Swift values, which have no
// stable address, so each answer is kept in a ring of the last 64 and is valid until 64
// more such calls have been made in the process. Byte copies are zeroed when they leave
// the ring (they may hold a secret). Delegates nothing.
import Foundation
import Synchronization

enum CFInteriorPointers {
    static let capacity = 64

    private final class Kept: @unchecked Sendable {
        // @unchecked: touched only under the ring's Mutex.
        let object: AnyObject?
        let bytes: UnsafeMutableRawBufferPointer?
        init(object: AnyObject?, bytes: UnsafeMutableRawBufferPointer?) {
            self.object = object
            self.bytes = bytes
        }
        deinit {
            if let bytes {
                if let base = bytes.baseAddress { explicit_bzero(base, bytes.count) }   // not elided before the free
                bytes.deallocate()
            }
        }
    }

    private static let ring = Mutex<[Kept]>([])

    private static func keep(_ k: Kept) {
        ring.withLock { kept in
            kept.append(k)
            if kept.count > capacity { kept.removeFirst(kept.count - capacity) }
        }
    }

    /// A pointer to `object`, valid while it stays in the ring.
    static func pointer(to object: AnyObject) -> UnsafeRawPointer {
        keep(Kept(object: object, bytes: nil))
        return UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
    }

    /// A pointer to a copy of `data`'s bytes, valid while it stays in the ring.
    static func bytes(of data: Data) -> UnsafePointer<UInt8>? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, data.count), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        data.withUnsafeBytes { src in
            if let base = src.baseAddress, let dst = buffer.baseAddress { dst.copyMemory(from: base, byteCount: src.count) }
        }
        keep(Kept(object: nil, bytes: buffer))
        return buffer.bindMemory(to: UInt8.self).baseAddress.map { UnsafePointer($0) }
    }

    /// The object behind a pointer made by `Unmanaged.passUnretained(x).toOpaque()` (or by this ring).
    static func object(at pointer: UnsafeRawPointer) -> AnyObject {
        Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue()
    }
}
