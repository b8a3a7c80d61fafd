// Where policy files live. Release builds use fixed paths only: no environment
// variable can point Keygate at a folder a user controls for the system layers.
// Test-hook builds honour KEYGATE_TEST_POLICY_ROOT=<dir> (TestHooks, in the
// KeygateEnvironment the caller passes down), which
// replaces all three folders by <dir>/vendor, <dir>/admin and <dir>/user; the owner
// and mode checks still apply (the suite runs as root and chowns its folders).
package enum PolicyLocations {
    /// The vendor folders (distribution packages, then `make install`'s default PREFIX=/usr/local).
    static let vendor = ["/usr/share/keygate/policies.d", "/usr/local/share/keygate/policies.d"]
    static let admin = "/etc/keygate/policies.d"
    /// Under the user's home.
    static let userRelative = "/.config/keygate/policies.d"

    /// The folders to read, in order, for a user whose home is `home`.
    package static func folders(home: String, environment: KeygateEnvironment) -> [(PolicyLayer, String)] {
        if let root = environment.testHooks.policyRoot {
            return [(.vendor, root + "/vendor"), (.admin, root + "/admin"), (.user, root + "/user")]
        }
        let base = home.hasSuffix("/") ? String(home.dropLast()) : home
        return vendor.map { (PolicyLayer.vendor, $0) } + [(.admin, admin), (.user, base + userRelative)]
    }
}
