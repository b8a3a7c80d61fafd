// keygate-gatekeeper: the root side of Keygate's access control (docs/GATEKEEPER.md).
// Installed setuid root in libexec; started by keygate and the library for each gated
// operation. Its first lines are CGatekeeperStart's constructor, which runs before the
// Swift runtime; everything else is in Keygate's Gatekeeper/ folder.
internal import CGatekeeperStart
import KeygateGatekeeper

GatekeeperMain.runAndExit()
