// The configuration value, parsed: each variable into its named field, a refused setting into an
// error that names the variable, its value and what it may be (thrown where it is used), and the
// test hooks into their own value (this is a test-hook build: TestHooks.compiledIn). The
// installed release binary's side, that no hook is read at all, is
// InstalledBinaryTests.test_testHooks_areNotReadByTheInstalledBinary.
import XCTest
@testable import KeygateCore

final class KeygateEnvironmentTests: XCTestCase {
    func test_eachVariableIsAField() throws {
        let env = KeygateEnvironment([
            "HOME": "/h", "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/b",
            "XDG_RUNTIME_DIR": "/run/user/1", "WAYLAND_DISPLAY": "wayland-0", "KEYGATE_STORE": "embedded",
            "KEYGATE_UNLOCK_PROMPT": "never", "KEYGATE_ACCESS_GROUPS": " team.a ,: b\t", "KEYGATE_ASKPASS": "/a",
            "KEYGATE_ASKPASS_REQUIRE": "prefer", "KEYGATE_PINENTRY": "", "PATH": "/p", "LC_CTYPE": "de_DE.UTF-8",
            "LANG": "C", "LISTEN_FDS": "1", "LISTEN_PID": "42", "LISTEN_FDNAMES": "x",
        ])
        XCTAssertEqual(env.home, "/h")
        XCTAssertEqual(env.dataHome, "/d")
        XCTAssertNil(env.configHome, "an empty variable is unset")
        XCTAssertEqual(env.sessionBusAddress, "unix:path=/b")
        XCTAssertEqual(env.runtimeDirectory, "/run/user/1")
        XCTAssertEqual(env.systemBusAddress, "unix:path=/run/dbus/system_bus_socket")
        XCTAssertTrue(env.hasDisplay)
        XCTAssertEqual(try env.store.get(), .fixed(.embedded))
        XCTAssertEqual(try env.unlockPrompt.get(), .never)
        XCTAssertEqual(env.accessGroups, ["team.a", "b"])
        XCTAssertEqual(env.askpass, "/a")
        XCTAssertEqual(try env.askpassRequirement.get(), .prefer)
        XCTAssertNil(env.pinentry)
        XCTAssertEqual(env.executableSearchPath, "/p")
        XCTAssertEqual(env.terminalType, "dumb")
        XCTAssertEqual(env.characterLocale, "de_DE.UTF-8")
        XCTAssertEqual(env.messagesLocale, "C")
        XCTAssertEqual(env.socketActivation, SocketActivation(descriptors: 1, pid: 42, names: "x"))
        XCTAssertEqual(env.childEnvironment["PATH"], "/p", "a child is given every variable")
        XCTAssertEqual(env.testHooks, .none)

        let empty: KeygateEnvironment = [:]
        XCTAssertFalse(empty.hasDisplay)
        XCTAssertNil(try empty.store.get())
        XCTAssertEqual(try empty.unlockPrompt.get(), .auto)
        XCTAssertEqual(try empty.askpassRequirement.get(), .unset)
        XCTAssertNil(empty.accessGroups)
        XCTAssertEqual(empty.executableSearchPath, "/usr/local/bin:/usr/bin:/bin")
        XCTAssertEqual(KeygateEnvironment(["KEYGATE_ACCESS_GROUPS": " , :"]).accessGroups, nil, "a list of no names declares none")
    }

    /// A bad value is an error naming the variable, its value and the values allowed; it is
    /// thrown where the setting is used, and the rest of the value is still there.
    func test_aRefusedSetting_isAClearError_thrownWhereItIsUsed() {
        let env = KeygateEnvironment(["KEYGATE_STORE": "sqlite", "KEYGATE_UNLOCK_PROMPT": "no", "KEYGATE_ASKPASS_REQUIRE": "always",
                                      "HOME": "/h"])
        for (setting, message) in [({ _ = try env.store.get() }, "KEYGATE_STORE=sqlite is not one of secret-service, embedded or auto: fix or unset it"),
                                   ({ _ = try env.unlockPrompt.get() }, "KEYGATE_UNLOCK_PROMPT=no is not one of auto, never: fix or unset it"),
                                   ({ _ = try env.askpassRequirement.get() },
                                    "KEYGATE_ASKPASS_REQUIRE=always is not one of force, prefer, never: fix or unset it")]
            as [(() throws -> Void, String)] {
            XCTAssertThrowsError(try setting()) { error in
                XCTAssertEqual(error as? KeychainError, KeychainError.param(message))
            }
        }
        XCTAssertEqual(env.home, "/h")
    }

    func test_theTestHooks_areTyped() throws {
        XCTAssertTrue(TestHooks.compiledIn, "the suite runs a test-hook build")
        let hooks = KeygateEnvironment([
            "KEYGATE_TEST_GATEKEEPER": "/g", "KEYGATE_TEST_GATE_DIR": "/gd", "KEYGATE_TEST_POLICY_ROOT": "/p",
            "KEYGATE_TEST_HOST_KEY": "/k", "KEYGATE_TEST_TCTI": "swtpm:port=1", "KEYGATE_TEST_REFUSE_PROMPTS": "1",
            "KEYGATE_TEST_FPRINT_DIR": "/f", "KEYGATE_TEST_PAM_CONFDIR": "/pam", "KEYGATE_TEST_KDF": "fast",
            "KEYGATE_TEST_STORE_DEADLINE": "2", "KEYGATE_TEST_SYSTEM_BUS": "unix:path=/s", "KEYGATE_TEST_LOCK_AFTER": "3",
            "KEYGATE_TEST_REUSE_DURATION": "0", "KEYGATE_TEST_REUSE_SCOPE": "ppid", "KEYGATE_TEST_LOCKOUT_SECONDS": "60",
            "KEYGATE_TEST_FINGER_UNLOCK": "5", "KEYGATE_TEST_PAM_SSHD": "x", "HOME": "/h",
        ]).testHooks
        XCTAssertNil(hooks.refused)
        XCTAssertEqual([hooks.gatekeeper, hooks.gateDirectory, hooks.policyRoot, hooks.hostKey, hooks.tcti, hooks.fprintDirectory,
                        hooks.pamConfdir, hooks.systemBus], ["/g", "/gd", "/p", "/k", "swtpm:port=1", "/f", "/pam", "unix:path=/s"])
        XCTAssertTrue(hooks.refusePrompts)
        XCTAssertTrue(hooks.fastKDF)
        XCTAssertEqual(hooks.storeDeadline, .seconds(2))
        XCTAssertEqual(hooks.overrides, {
            var o = TestOverrides()
            (o.lockAfter, o.reuseDuration, o.reuseScope, o.lockoutSeconds, o.fingerUnlock) = (3, 0, .ppid, 60, 5)
            return o
        }())
        XCTAssertEqual(hooks.variables.count, 17, "every KEYGATE_TEST_* variable is passed on, and only those")
        XCTAssertNil(hooks.variables["HOME"])
        // The daemon's identity: every hook but where the helper is, so a test can take the helper away.
        let identity = try XCTUnwrap(hooks.daemonIdentity)
        XCTAssertFalse(identity.contains("KEYGATE_TEST_GATEKEEPER"))
        XCTAssertTrue(identity.contains("KEYGATE_TEST_PAM_SSHD=x"))
        XCTAssertEqual(KeygateEnvironment(["KEYGATE_TEST_GATEKEEPER": "/other"]).testHooks.daemonIdentity,
                       KeygateEnvironment([:]).testHooks.daemonIdentity)
    }

    /// A hook that cannot be used is an error naming it, thrown by the operation that reads the hooks.
    func test_aRefusedHook_isAnErrorNamingIt() {
        for (name, value, wanted) in [("KEYGATE_TEST_LOCK_AFTER", "soon", "a whole number of seconds"),
                                      ("KEYGATE_TEST_POLICY_ROOT", "policy", "an absolute path"),
                                      ("KEYGATE_TEST_KDF", "slow", "\"fast\""),
                                      ("KEYGATE_TEST_REUSE_SCOPE", "room", "one of tty, session, global, ppid")] {
            let hooks = KeygateEnvironment([name: value]).testHooks
            XCTAssertThrowsError(try hooks.check(), name) { error in
                XCTAssertEqual((error as? KeychainError)?.message, "\(name)=\(value) is not \(wanted): fix or unset it (a test hook)")
            }
        }
        XCTAssertNoThrow(try KeygateEnvironment(["KEYGATE_TEST_KDF": ""]).testHooks.check(), "empty is unset")
    }
}
