// library-read: times Keychain.data(for:) in one process, or fills the store through
// Keychain.set, for bench/run. All Secret Service, crypto and key-cache work is the
// Keygate library's; this file only loops and prints figures.
//
//   library-read read SERVICE ACCOUNT N     one untimed-first call, then N timed calls;
//                                           prints "first_us mean_us median_us"
//   library-read populate SERVICE N [FROM]  sets item-FROM ... item-(FROM+N-1) to 32 bytes
import Foundation
import Keygate

func microseconds(_ start: ContinuousClock.Instant, _ end: ContinuousClock.Instant) -> Double {
    let d = end - start
    return Double(d.components.seconds) * 1e6 + Double(d.components.attoseconds) / 1e12
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("library-read: " + message + "\n").utf8))
    exit(1)
}

let args = CommandLine.arguments
let clock = ContinuousClock()
do {
    switch args.count > 1 ? args[1] : "" {
    case "read" where args.count == 5:
        let keychain = Keychain(service: args[2])
        let account = args[3]
        guard let n = Int(args[4]), n > 0 else { fail("N must be a positive number") }
        let t0 = clock.now
        guard try keychain.data(for: account) != nil else { fail("no item \(args[2])/\(account)") }
        let first = microseconds(t0, clock.now)
        var times: [Double] = []
        times.reserveCapacity(n)
        for _ in 0..<n {
            let s = clock.now
            guard let value = try keychain.data(for: account), !value.isEmpty else { fail("the item vanished") }
            times.append(microseconds(s, clock.now))
        }
        times.sort()
        let mean = times.reduce(0, +) / Double(n)
        print(String(format: "%.1f %.1f %.1f", first, mean, times[n / 2]))
    case "populate" where args.count == 4 || args.count == 5:
        let keychain = Keychain(service: args[2])
        guard let n = Int(args[3]), n >= 0 else { fail("N must be a number") }
        let from = args.count == 5 ? Int(args[4]) ?? 0 : 0
        let value = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) })
        for i in from..<(from + n) { try keychain.set(value, for: "item-\(i)") }
    default:
        fail("usage: library-read read SERVICE ACCOUNT N | populate SERVICE N [FROM]")
    }
} catch {
    fail("\(error)")
}
