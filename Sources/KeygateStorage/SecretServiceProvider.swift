// Which program answers org.freedesktop.secrets on the session bus (gnome-keyring, KeePassXC,
// KWallet or another), so that every message gives advice for the daemon the user actually
// runs. Found by asking the bus daemon for the owner's process id (GetConnectionUnixProcessID)
// and reading /proc/PID/comm; SecretServiceConnection asks once per connection and only when it
// has something to say (an error, a prompt, doctor). Nothing here talks D-Bus itself.
import KeygateCore

package enum SecretServiceProvider: Sendable, Equatable {
    case gnomeKeyring
    case keePassXC
    case kWallet
    /// Keygate's own keygate-secret-service: its items are the keychain's embedded store.
    case keygate
    /// Another program, by its command name (/proc/PID/comm).
    case other(String)
    /// Not known: no owner, no bus, or /proc could not tell.
    case unknown

    /// The provider behind a process's command name. The kernel cuts comm to 15 bytes:
    /// gnome-keyring-daemon shows as "gnome-keyring-d".
    init(command: String) {
        let name = String(command.prefix { $0 != "\n" && $0 != "\0" })
        if name.hasPrefix("keygate-secret") {
            self = .keygate
        } else if name.hasPrefix("gnome-keyring") {
            self = .gnomeKeyring
        } else if name.hasPrefix("keepassxc") || name.hasPrefix("KeePassXC") {
            self = .keePassXC
        } else if name.hasPrefix("kwalletd") || name == "ksecretd" {
            self = .kWallet
        } else if name.isEmpty {
            self = .unknown
        } else {
            self = .other(name)
        }
    }

    /// The provider running as process `pid` (its /proc/PID/comm).
    init(pid: UInt32) {
        guard pid > 0, let command = Self.readSmallFile("/proc/\(pid)/comm") else {
            self = .unknown
            return
        }
        self.init(command: command)
    }

    /// As people call it: "gnome-keyring", "KeePassXC".
    package var name: String {
        switch self {
        case .gnomeKeyring: return "gnome-keyring"
        case .keePassXC: return "KeePassXC"
        case .kWallet: return "KWallet"
        case .keygate: return "Keygate's own Secret Service"
        case .other(let command): return command
        case .unknown: return "the Secret Service"
        }
    }

    /// The daemon to check on: "gnome-keyring-daemon".
    var daemonName: String {
        switch self {
        case .gnomeKeyring: return "gnome-keyring-daemon"
        case .keePassXC: return "KeePassXC"
        case .kWallet: return "kwalletd"
        case .keygate: return "keygate-secret-service"
        case .other(let command): return command
        case .unknown: return "the Secret Service daemon (gnome-keyring-daemon, KeePassXC or kwalletd)"
        }
    }

    /// What to do about a locked default collection.
    package var unlockAdvice: String {
        switch self {
        case .gnomeKeyring:
            return "unlock it (log in to the desktop, or restart gnome-keyring-daemon with --unlock), then try again"
        case .keePassXC:
            return "unlock the database in KeePassXC (its window, or start it with `keepassxc --pw-stdin DATABASE`), "
                + "then try again"
        case .kWallet:
            return "open the wallet (kwalletmanager5, or log in through pam_kwallet5), then try again"
        case .keygate:
            return "unlock the keychain (keygate unlock, or log in through pam_keygate), then try again"
        case .other(let command):
            return "unlock it in \(command), then try again"
        case .unknown:
            return "unlock it in your Secret Service (gnome-keyring, KeePassXC or KWallet), then try again"
        }
    }

    /// What grants a program access to items the provider locks one by one, the collection open.
    package var itemAccessAdvice: String {
        switch self {
        case .keePassXC:
            return "run it where KeePassXC can show its Access Request window and allow it there, or turn off \"Confirm when "
                + "passwords are retrieved by clients\" under Tools > Settings > Secret Service Integration"
        case .kWallet:
            return "allow Keygate in kwalletd's access window (or in kwalletmanager5's access control), then try again"
        case .gnomeKeyring:
            return "unlock the item in seahorse, then try again"
        case .keygate:
            return "the item needs a person for each read: answer its prompt (Unlock), then try again"
        case .other(let command):
            return "allow the access in \(command), then try again"
        case .unknown:
            return "allow the access in your Secret Service, then try again"
        }
    }

    /// What to do when there is no default collection.
    var defaultCollectionAdvice: String {
        switch self {
        case .keePassXC:
            return "in KeePassXC, open Database Settings > Secret Service Integration and expose a group "
                + "(and enable the integration under Tools > Settings > Secret Service Integration)"
        case .kWallet:
            return "create the wallet named kdewallet (kwalletmanager5), or log in through pam_kwallet5 once"
        default:
            return "create one (log in to the desktop once, or use seahorse), or run under " + InstalledTools.secretSession
        }
    }

    /// Why this provider may hold an answer back, said after "did not answer within N s".
    var slowAnswerHint: String {
        switch self {
        case .keePassXC:
            // KeePassXC's "Unlock before search" (FdoSecrets/UnlockBeforeSearch, on by default) holds a
            // search of a locked database until its unlock dialog is answered.
            return "; KeePassXC holds a search of a locked database until its unlock dialog is answered: unlock the "
                + "database, or turn off \"Unlock before search\" in its Secret Service Integration settings"
        default:
            return ""
        }
    }

    /// The Debian package that ships the provider, for reporting its version.
    package var debianPackage: String? {
        switch self {
        case .gnomeKeyring: return "gnome-keyring"
        case .keePassXC: return "keepassxc"
        case .kWallet: return "libkf5wallet-bin"
        case .keygate: return "keygate"
        case .other, .unknown: return nil
        }
    }

    /// At most 256 bytes of a small /proc file; nil when it cannot be read.
    private static func readSmallFile(_ path: String) -> String? {
        let fd = SafeFile.open(path, .readOnly, links: .follow)
        guard fd >= 0 else { return nil }
        defer { Descriptor.close(fd) }
        guard case .success(let bytes) = SafeFile.readOnce(fd, upTo: 256), !bytes.isEmpty else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
