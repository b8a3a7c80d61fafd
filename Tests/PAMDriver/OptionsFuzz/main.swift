// options-fuzz: feeds random argument vectors, as libpam hands them to a module
// (argc/argv of C strings, any bytes but NUL), to pam_keygate's option parser,
// ModuleOptions.from(argc:argv:), compiled together with this file by swiftc (the
// PAMKeygate target has no test target). It checks what must hold for any input
// and prints "ok RUNS SEED"; a trap is the failure it looks for.
//   usage: options-fuzz RUNS [SEED]
#if canImport(Glibc)
import Glibc
#endif

/// xorshift64*: reproducible from the printed seed.
struct Generator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27
        return state &* 2685821657736338717
    }
}

let arguments = CommandLine.arguments
let runs = arguments.count > 1 ? Int(arguments[1]) ?? 10_000 : 10_000
let seed = arguments.count > 2 ? UInt64(arguments[2]) ?? 1 : UInt64(UInt32(truncatingIfNeeded: time(nil))) | 1
var rng = Generator(state: seed)

let fragments = ["debug", "unlock_only", "lock_after", "min_uid", "=", "==", "-1", "0", "4294967295",
                 "4294967296", "99999999999999999999", "abc", " ", "\t", "é", "\u{FFFD}", "+5", "0x10", "1e3"]

func randomArgument() -> [UInt8] {
    switch Int.random(in: 0..<4, using: &rng) {
    case 0:  // random bytes, no NUL (C strings cannot hold one)
        let length = Int.random(in: 0..<40, using: &rng)
        return (0..<length).map { _ in UInt8.random(in: 1...255, using: &rng) }
    case 1:  // known pieces glued together
        let count = Int.random(in: 1...4, using: &rng)
        return Array((0..<count).map { _ in fragments.randomElement(using: &rng) ?? "" }.joined().utf8)
    case 2:  // long (beyond maxArgumentBytes)
        let length = Int.random(in: 200...5000, using: &rng)
        return [UInt8](repeating: UInt8(ascii: "x"), count: length)
    default:  // a valid option with a random value
        let name = ["lock_after=", "min_uid="].randomElement(using: &rng) ?? ""
        return Array(name.utf8) + Array(String(Int64.random(in: Int64.min...Int64.max, using: &rng)).utf8)
    }
}

var failures = 0
for run in 0..<runs {
    let count = Int.random(in: 0..<8, using: &rng)
    let args = (0..<count).map { _ in randomArgument() }
    // argv as libpam builds it, sometimes with a NULL entry among the pointers.
    var pointers: [UnsafePointer<CChar>?] = args.map { bytes in
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (i, b) in bytes.enumerated() { buffer[i] = CChar(bitPattern: b) }
        buffer[bytes.count] = 0
        return UnsafePointer(buffer)
    }
    if count > 0 && Int.random(in: 0..<20, using: &rng) == 0 { pointers[0] = nil }
    let options = pointers.withUnsafeMutableBufferPointer { buffer in
        ModuleOptions.from(argc: Int32(count), argv: buffer.baseAddress)
    }
    // What must hold: one problem at most per argument (plus the UTF-8 summary line),
    // and the flags only from their exact spelling.
    let texts = args.map { String(decoding: $0, as: UTF8.self) }
    if options.problems.count > count + 1
        || (options.debug && !texts.contains("debug"))
        || (options.unlockOnly && !texts.contains("unlock_only"))
        || options.problems.contains(where: { $0.utf8.count > 2 * ModuleOptions.maxArgumentBytes + 200 }) {
        print("FAIL run \(run) seed \(seed): \(texts.map { $0.prefix(40) }) -> \(options)")
        failures += 1
    }
    for pointer in pointers { pointer.map { UnsafeMutablePointer(mutating: $0).deallocate() } }
}
print(failures == 0 ? "ok \(runs) \(seed)" : "failed \(failures) of \(runs) seed \(seed)")
exit(failures == 0 ? 0 : 1)
