// Doctor check: the runtime pieces a Secret Service provider needs that its own package does
// not pull in. kwalletd5 encrypts libsecret's sessions (secret-tool's dh-ietf1024 session)
// through QCA, whose OpenSSL plugin is in libqca-qt5-2-plugins: without it secret-tool,
// seahorse and every libsecret program fail against kwalletd5, while Keygate's plain sessions
// still work. Looks for the plugin file only; never talks to the provider.

enum ProviderPartsCheck {
    static let name = "provider-parts"

    /// Where Qt 5 looks for QCA's OpenSSL plugin, per multiarch folder.
    static let qcaPluginPattern = "/usr/lib/*/qt5/plugins/crypto/libqca-ossl.so"

    /// A line for `provider` when it needs something to check; nil for providers that need nothing.
    static func run(_ provider: SecretServiceProvider, qcaPlugin: String = qcaPluginPattern) -> DiagnosticResult? {
        guard provider == .kWallet else { return nil }
        if exists(matching: qcaPlugin) {
            return DiagnosticResult(name, .ok, "KWallet: QCA's OpenSSL plugin is installed (libsecret programs such as "
                                    + "secret-tool can open encrypted sessions with kwalletd)")
        }
        return DiagnosticResult(name, .warn, "KWallet: QCA's OpenSSL plugin (\(qcaPlugin)) is missing: secret-tool, seahorse "
                                + "and other libsecret programs cannot talk to kwalletd (Keygate's plain sessions still work)",
                                advice: "install libqca-qt5-2-plugins (sudo apt-get install libqca-qt5-2-plugins)")
    }

    /// Whether a file matches the glob `pattern`.
    private static func exists(matching pattern: String) -> Bool {
        !FileProbe.glob(pattern).isEmpty
    }
}
