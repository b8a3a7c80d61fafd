// swift-tools-version:6.0
// Keygate: the Apple Keychain's access-control model on Linux.
// C libraries are reached only through the system-library targets below.
import PackageDescription

let testHooks: [SwiftSetting] = [
    // Debug builds (the ones the test suite runs) accept test-only knobs such as a
    // cheap Argon2id cost and a PAM service folder. Release builds compile them out,
    // so no user can talk an installed binary into a weaker configuration.
    .define("KEYGATE_TEST_HOOKS", .when(configuration: .debug)),
]
// The targets of the two programs root starts, keygate-pam-helper at every login and
// keygate-gatekeeper at gated reads: they import neither Swift's concurrency runtime (with its
// libdispatch) nor its Regex library, and no file of theirs imports Foundation, so neither
// program relocates those libraries' metadata at each start (docs/DECISIONS.md, "The login
// helper links no Foundation"; LayeringTests reads the built programs).
let rootProgram: [SwiftSetting] = [
    .unsafeFlags(["-Xfrontend", "-disable-implicit-concurrency-module-import",
                  "-Xfrontend", "-disable-implicit-string-processing-module-import"]),
]

let package = Package(
    name: "Keygate",
    products: [
        .library(name: "Keygate", targets: ["Keygate"]),
        .library(name: "KeygateSecurity", targets: ["KeygateSecurity"]),
        // The same surface under Apple's module names, so `import Security` and
        // `import LocalAuthentication` build unchanged (docs/SECURITY_COMPAT.md, "Importing").
        .library(name: "Security", targets: ["Security"]),
        .library(name: "LocalAuthentication", targets: ["LocalAuthentication"]),
        .executable(name: "keygate", targets: ["keygate"]),
        .executable(name: "keygate-gatekeeper", targets: ["keygate-gatekeeper"]),
        .executable(name: "keygate-pam-helper", targets: ["keygate-pam-helper"]),
        .executable(name: "keygate-secret-service", targets: ["keygate-secret-service"]),
    ],
    targets: [
        // sd-bus: the Secret Service is spoken over D-Bus directly (Storage/).
        // Declarations only: libsystemd and SQLite are dlopened on first use (Sources/CSDBus/shim.h,
        // Sources/CSQLite/shim.h), so a run that needs neither never loads them.
        .systemLibrary(name: "CSDBus"),
        .systemLibrary(name: "CPAM", providers: [.apt(["libpam0g-dev"])]),
        .systemLibrary(name: "CKeyutils", pkgConfig: "libkeyutils", providers: [.apt(["libkeyutils-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSystem"),
        .systemLibrary(name: "CSQLite"),
        // OpenSSL's libcrypto, declared in its shim.h and loaded on first use: the Secret Service
        // daemon's dh-ietf1024 session (DH, HKDF, AES-CBC). Only KeygateSecretService reaches it.
        .systemLibrary(name: "CCrypto"),
        // Headers only: Keygate dlopens libtss2-esys when a TPM is in use (Sources/CTSS2/shim.h).
        .systemLibrary(name: "CTSS2", providers: [.apt(["libtss2-dev"])]),
        // The library is four targets, one per layer; a target may import only the ones
        // below it, and the compiler holds it to that (docs/ARCHITECTURE.md draws the graph,
        // Tests/KeygateTests/LayeringTests.swift checks every import against this order).
        // Items, errors, crypto, keys, the keyring cache, policy, system and audit: no I/O
        // beyond files, the kernel keyring and the TPM.
        .target(
            name: "KeygateCore",
            dependencies: ["CKeyutils", "CSodium", "CSystem", "CTSS2"],
            swiftSettings: testHooks + rootProgram
        ),
        // Where sealed items live: the Secret Service over D-Bus, or the embedded SQLite store.
        .target(name: "KeygateStorage", dependencies: ["KeygateCore", "CSDBus", "CSQLite"], swiftSettings: testHooks),
        // What root and its clients ask over the system bus (fprintd's reader and enrolled fingers), with a
        // deadline: a narrow sd-bus client of its own, so that the setuid gatekeeper links neither the
        // Secret Service client nor SQLite (LayeringTests).
        .target(name: "KeygateSystemBus", dependencies: ["KeygateCore", "CSDBus", "CSystem"], swiftSettings: testHooks + rootProgram),
        // Who root acts as: another user's ids for a piece of code, or root's in full for good (UserIdentity).
        // The one place ids change; linked by root's programs and the keygate CLI, never by the library
        // apps link (LayeringTests).
        .target(name: "KeygateIdentity", dependencies: ["KeygateCore", "CSystem"], swiftSettings: testHooks + rootProgram),
        // Who is asking: PAM conversations and the prompters (terminal, pinentry, askpass).
        .target(name: "KeygateAuthentication", dependencies: ["KeygateCore", "CPAM", "CSystem"], swiftSettings: testHooks + rootProgram),
        // What the client and keygate-gatekeeper say to each other: requests, replies, framing,
        // and where root keeps the gatekeeper's state. Both sides link it; it decides nothing.
        .target(name: "KeygateGateWire", dependencies: ["KeygateCore", "CSystem"], swiftSettings: testHooks + rootProgram),
        // The public API, the operations behind it, key unlocking, the gatekeeper's client and doctor.
        // The product users import; it re-exports the targets below it.
        .target(
            name: "Keygate",
            dependencies: ["KeygateCore", "KeygateStorage", "KeygateAuthentication", "KeygateGateWire", "KeygateSystemBus", "CSystem"],
            swiftSettings: testHooks
        ),
        // Root's side of the gate (docs/GATEKEEPER.md): the server, the daemon, root's secrets,
        // records and the scopes it reads from the kernel. Linked only by the two programs that
        // run as root, keygate-gatekeeper and keygate-pam-helper; no product contains it
        // (LayeringTests holds every other target to that).
        .target(
            name: "KeygateGatekeeper",
            dependencies: ["KeygateCore", "KeygateSystemBus", "KeygateIdentity", "KeygateAuthentication", "KeygateGateWire", "CSystem"],
            swiftSettings: testHooks + rootProgram
        ),
        // Apple's Security and LocalAuthentication surface over Keygate (docs/SECURITY_COMPAT.md).
        .target(name: "KeygateSecurity", dependencies: ["Keygate"], swiftSettings: testHooks),
        // Apple's module names for KeygateSecurity: each file is one `@_exported import`.
        .target(name: "Security", dependencies: ["KeygateSecurity"]),
        .target(name: "LocalAuthentication", dependencies: ["KeygateSecurity"]),
        .target(name: "KeygateCLI", dependencies: ["Keygate", "KeygateIdentity", "CSystem"], swiftSettings: testHooks),
        // The second door (docs/SECRET_SERVICE.md): the Secret Service API over the same keychain,
        // one file per D-Bus object, for keygate-secret-service. Beside the CLI: it uses the
        // library as the CLI does and imports neither the CLI nor root's gatekeeper code.
        .target(name: "KeygateSecretService", dependencies: ["Keygate", "KeygateCore", "KeygateStorage", "KeygateAuthentication", "CCrypto"], swiftSettings: testHooks),
        .executableTarget(name: "keygate-secret-service", dependencies: ["KeygateSecretService", "KeygateCore"], swiftSettings: testHooks),
        // The heavy half of pam_keygate.so (KDF, unwrap, keyring, sessions), a program the
        // thin module starts for each PAM call with the password on a pipe. The module itself
        // (Sources/PAMKeygateModule, Embedded Swift) is built by `make pam`; docs/DECISIONS.md.
        .executableTarget(name: "keygate-pam-helper", dependencies: ["KeygateCore", "KeygateGatekeeper", "KeygateIdentity", "CPAM"], path: "Sources/PAMKeygate", swiftSettings: rootProgram),
        .executableTarget(name: "keygate", dependencies: ["KeygateCLI"], swiftSettings: testHooks),
        // The setuid-root helper that holds the gate keys (docs/GATEKEEPER.md); its code is KeygateGatekeeper.
        // CGatekeeperStart is its first lines, in C, run before the Swift runtime starts.
        .target(name: "CGatekeeperStart", cSettings: [.define("KEYGATE_TEST_HOOKS", .when(configuration: .debug))]),
        .executableTarget(name: "keygate-gatekeeper", dependencies: ["KeygateGatekeeper", "CGatekeeperStart"], swiftSettings: testHooks + rootProgram),
        .target(name: "KeygateTestSupport", dependencies: ["Keygate"], path: "Tests/KeygateTestSupport"),
        .testTarget(name: "KeygateTests", dependencies: ["Keygate", "KeygateCore", "KeygateStorage", "KeygateAuthentication", "KeygateGateWire", "KeygateSystemBus", "KeygateGatekeeper", "KeygateCLI", "KeygateSecretService", "KeygateTestSupport"], exclude: ["PolicyCorpus", "FormatVectors"], swiftSettings: testHooks),
        .testTarget(name: "KeygateIntegrationTests", dependencies: ["Keygate", "KeygateCore", "KeygateStorage", "KeygateAuthentication", "KeygateGateWire", "KeygateTestSupport"], swiftSettings: testHooks),
        // Sources written as Apple code is (Swift 5 mode, as most apps still are), against the real stack.
        .testTarget(name: "KeygateSecurityTests", dependencies: ["KeygateSecurity", "Security", "LocalAuthentication", "Keygate", "KeygateCore", "KeygateStorage", "KeygateAuthentication", "KeygateTestSupport"],
                    swiftSettings: testHooks + [.swiftLanguageMode(.v5)]),
        // Wrappers and their own XCTest suites, written as Apple code is (`import Security`,
        // `import LocalAuthentication`, some files Foundation or XCTest only), depending on Apple's
        // module names alone. KeygateSecurityTests.WrapperSuiteRunTests runs them as a user would.
        .testTarget(name: "AppleWrapperSuites", dependencies: ["Security", "LocalAuthentication"],
                    swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "KeygateCLITests", dependencies: ["KeygateTestSupport"]),
    ]
)
