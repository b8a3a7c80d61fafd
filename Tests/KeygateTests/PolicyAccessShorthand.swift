// `access = X` in a policy file is the shorthand for `default-access = X` and
// `minimum-access = X` (what the one `access` key meant before). The parser and merge
// tests written for it read it back as `bothAccess`: X when both keys are X, and a value
// no policy gives (every bit set) when they differ, so that an equality assertion fails.
@testable import KeygateCore

extension PolicySettings {
    var bothAccess: AccessControl? {
        defaultAccess == minimumAccess ? defaultAccess : AccessControl(rawValue: .max)
    }
}

extension PolicyDecision {
    var bothAccess: AccessControl? {
        defaultAccess == minimumAccess ? defaultAccess : AccessControl(rawValue: .max)
    }
}
