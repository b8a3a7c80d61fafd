// Tests that need the real system (D-Bus and gnome-keyring, PAM, the kernel
// keyring, root to create users) call `Requirement.require`. Locally a missing
// system skips the test; under CI (CI=true) it fails, because a skip there would
// hide a broken setup.
import Foundation
import XCTest

public struct RequirementMissing: Error, CustomStringConvertible {
    public let description: String
}

public enum Requirement {
    public static var isCI: Bool {
        let v = ProcessInfo.processInfo.environment["CI"]?.lowercased()
        return v == "true" || v == "1"
    }

    /// Skips (locally) or fails (under CI) unless `condition` holds.
    public static func require(_ condition: Bool, _ what: String) throws {
        if condition { return }
        if isCI { throw RequirementMissing(description: "required under CI but missing: \(what)") }
        throw XCTSkip("needs \(what)")
    }

    public static var hasSessionBus: Bool {
        ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"].map { !$0.isEmpty } ?? false
    }

    public static var isRoot: Bool { getuid() == 0 }

    /// The D-Bus session bus with a Secret Service on it (run the suite under scripts/secret-session).
    public static func requireSecretService() throws {
        try require(hasSessionBus, "a D-Bus session bus with gnome-keyring (run under scripts/secret-session)")
    }
}
