// The `keygate` executable: hardens the process (no core dumps, not ptrace-able
// by other same-user processes) before any secret is touched, then runs the CLI on
// argv's raw bytes (KeygateMain refuses names that are not valid UTF-8).
import KeygateCLI

ProcessHardening.apply()
ProgramEntry.exit(KeygateMain.run(rawArguments: ProgramEntry.rawArguments))
