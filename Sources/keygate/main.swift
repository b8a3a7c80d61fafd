// The `keygate` executable: hardens the process (no core dumps, not ptrace-able
// by other same-user processes) before any secret is touched, then runs the CLI.
import KeygateCLI
import Glibc

ProcessHardening.apply()
exit(KeygateMain.run(Array(CommandLine.arguments.dropFirst())))
