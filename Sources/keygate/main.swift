// The `keygate` executable: hardens the process (no core dumps, not ptrace-able
// by other same-user processes) before any secret is touched, then runs the CLI on
// argv's raw bytes (KeygateMain refuses names that are not valid UTF-8).
import KeygateCLI
import Glibc

ProcessHardening.apply()
var rawArguments: [[UInt8]] = []
for index in 0..<Int(CommandLine.argc) where index > 0 {
    guard let pointer = CommandLine.unsafeArgv[index] else { continue }
    rawArguments.append(Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer))))
}
exit(KeygateMain.run(rawArguments: rawArguments))
