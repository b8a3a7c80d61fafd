// keygate-gatekeeper: the root side of Keygate's access control (docs/GATEKEEPER.md).
// Installed setuid root in libexec; started by keygate and the library for each gated
// operation. Everything is in Keygate's Gatekeeper/ folder.
import Keygate
internal import Glibc

exit(GatekeeperMain.run())
