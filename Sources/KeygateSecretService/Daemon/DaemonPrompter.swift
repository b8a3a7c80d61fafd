// How keygate-secret-service asks the person (a collection's Unlock): KEYGATE_ASKPASS when it
// names a program, else a pinentry (KEYGATE_PINENTRY, or pinentry on PATH) where a display is
// (DISPLAY or WAYLAND_DISPLAY), else nothing: the prompt then completes as dismissed at once.
// Never the terminal: a daemon started from one must not read a password from it.
import Keygate
import KeygateCore

enum DaemonPrompter {
    static func choose(_ environment: KeygateEnvironment) -> (any Prompter)? {
        let variables = environment.variables
        if let askpass = environment.nonEmpty("KEYGATE_ASKPASS") {
            return SystemPrompter(askpass: askpass, environment: variables)
        }
        let display = environment.nonEmpty("DISPLAY") != nil || environment.nonEmpty("WAYLAND_DISPLAY") != nil
        guard display else { return nil }
        if environment.nonEmpty("KEYGATE_PINENTRY") != nil { return SystemPrompter(environment: variables, pinentry: true) }
        let path = environment.nonEmpty("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where FileSystem.allows(.executable, folder + "/pinentry") {
            return SystemPrompter(environment: variables, pinentry: true)
        }
        return nil
    }
}
