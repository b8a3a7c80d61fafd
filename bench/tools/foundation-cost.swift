// bench/tools/foundation-cost.swift: what linking FoundationEssentials statically costs a CLI.
// Build it twice and time both with spawn-timer, paired:
//   swiftc -O -static-stdlib -use-ld=lld foundation-cost.swift -o without
//   swiftc -O -static-stdlib -use-ld=lld -D WITH_FE foundation-cost.swift -o with
//   spawn-timer 200 5 with ./with --- without ./without --- with-lookups ./with x --- without-lookups ./without x
// Without an argument it only starts; with one it also makes 40 first-time conformance lookups
// (20 types against 2 protocols), each a scan of every conformance record in the binary.
// 40 first-time conformance lookups (distinct type/protocol pairs), as a read path makes them.
struct A1 {}; struct A2 {}; struct A3 {}; struct A4 {}; struct A5 {}; struct A6 {}; struct A7 {}; struct A8 {}
struct A9 {}; struct A10 {}; struct A11 {}; struct A12 {}; struct A13 {}; struct A14 {}; struct A15 {}; struct A16 {}
struct A17 {}; struct A18 {}; struct A19 {}; struct A20 {}
@inline(never) func probe(_ values: [Any]) -> Int {
    var n = 0
    for v in values { if v is CustomStringConvertible { n += 1 }; if v is any Hashable { n += 1 } }
    return n
}
#if WITH_FE
import FoundationEssentials
@inline(never) func keep() -> Int { (try? JSONEncoder().encode([1]))?.count ?? 0 }
#else
@inline(never) func keep() -> Int { 0 }
#endif
let values: [Any] = [A1(), A2(), A3(), A4(), A5(), A6(), A7(), A8(), A9(), A10(), A11(), A12(), A13(), A14(), A15(), A16(), A17(), A18(), A19(), A20()]
if CommandLine.arguments.count > 1 { print(probe(values) + keep()) } else { print(keep()) }
