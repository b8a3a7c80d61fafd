// How keygate-secret-service asks the person (a collection's Unlock): KEYGATE_ASKPASS when it
// names a program, else a pinentry (KEYGATE_PINENTRY, or pinentry on PATH) where a display is
// (DISPLAY or WAYLAND_DISPLAY), else nothing: the prompt then completes as dismissed at once.
// Never the terminal: a daemon started from one must not read a password from it.
import Keygate
import KeygateCore

enum DaemonPrompter {
    static func choose(_ environment: KeygateEnvironment) -> (any Prompter)? {
        if let askpass = environment.askpass {
            return SystemPrompter(askpass: askpass, environment: environment)
        }
        guard environment.hasDisplay else { return nil }
        if environment.pinentry != nil { return SystemPrompter(environment: environment, pinentry: true) }
        for folder in environment.executableSearchPath.split(separator: ":") where FileSystem.allows(.executable, folder + "/pinentry") {
            return SystemPrompter(environment: environment, pinentry: true)
        }
        return nil
    }
}
