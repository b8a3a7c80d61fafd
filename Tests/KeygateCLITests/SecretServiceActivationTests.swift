// Which provider the session bus activates once Keygate is installed, with the installed files:
// `make install` (its one INSTALL_LIST) into a staging folder, keygate-secret-service's real
// binary in it, then, in a private mount namespace, those files bound where they are installed
// (/usr/local/share, /usr/local/libexec, the snippet in /usr/share/dbus-1/session.d) and a real
// session bus (`dbus-daemon --session`: the system's own session.conf) started as a test user:
//   - gnome-keyring installed (its /usr/share/dbus-1/services file): the bus starts gnome-keyring;
//     installing Keygate changed nothing;
//   - gnome-keyring's file hidden (no other provider): the bus starts keygate-secret-service;
//   - the user's own choice (Keygate's file copied into ~/.local/share/dbus-1/services): Keygate's,
//     gnome-keyring installed or not.
// `keygate doctor` says, in each case, which program answers and whether it is Keygate's. The
// time from activation to owning the name is printed (bench/ reports it).
//
// Not in the embedded-store pass: it starts its own bus and never touches the item store.
import Foundation
import KeygateTestSupport
import XCTest

final class SecretServiceActivationTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus

    private var stage = ""
    private var user: TestUser?

    override func setUpWithError() throws {
        try Requirement.require(Requirement.isRoot, "root, for a mount namespace and a test user")
        for tool in ["/usr/bin/unshare", "/usr/bin/dbus-daemon", "/usr/bin/dbus-send", "/usr/bin/make"] {
            try Requirement.require(FileManager.default.isExecutableFile(atPath: tool), tool)
        }
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.secretServiceBinary),
                                "the built keygate-secret-service at \(PackagePaths.secretServiceBinary)")
        try Requirement.require(FileManager.default.fileExists(atPath: "/usr/share/dbus-1/services/org.freedesktop.secrets.service"),
                                "gnome-keyring's activation file (apt-get install gnome-keyring)")
        let staged = try StagedInstall()
        defer { staged.remove() }
        // The real daemon in place of the stand-in, so that the installed file starts it.
        try FileManager.default.removeItem(atPath: staged.work + "/bin/keygate-secret-service")
        try FileManager.default.copyItem(atPath: PackagePaths.secretServiceBinary, toPath: staged.work + "/bin/keygate-secret-service")
        stage = NSTemporaryDirectory() + "kg-activation-\(UUID().uuidString.prefix(8))"
        let installed = try staged.make(["install", "DESTDIR=" + stage], prefix: "/usr/local")
        XCTAssertEqual(installed.status, 0, installed.err)
        _ = try Subprocess.run(["chmod", "-R", "a+rX", stage])
        user = try TestUser.create()
    }

    override func tearDownWithError() throws {
        user?.remove()
        if !stage.isEmpty { try? FileManager.default.removeItem(atPath: stage) }
    }

    /// Runs the activation in a mount namespace; returns the script's `name=value` lines.
    /// `statusFirst`: `keygate status` runs before the explicit activation (its store choice
    /// asks the Secret Service, which starts the provider).
    private func activate(hideGnomeKeyring: Bool, userChoosesKeygate: Bool, statusFirst: Bool = false) throws -> ProcessResult {
        let user = try XCTUnwrap(self.user, "setUp made the test user")
        let tools = try UserSession.stageTools()
        let script = """
            set -u
            stage=\(stage); work=$(mktemp -d /tmp/kg-act.XXXXXX); chmod 755 "$work"
            mount --make-rprivate /
            mkdir -p /usr/local/share /usr/local/libexec
            mount --bind "$stage/usr/local/share" /usr/local/share
            mount --bind "$stage/usr/local/libexec" /usr/local/libexec
            cp -a /usr/share/dbus-1 "$work/dbus-1"
            mkdir -p "$work/dbus-1/session.d"
            cp "$stage/usr/share/dbus-1/session.d/keygate-secret-service.conf" "$work/dbus-1/session.d/"
            \(hideGnomeKeyring ? "rm -f \"$work/dbus-1/services/org.freedesktop.secrets.service\"" : "")
            mount --bind "$work/dbus-1" /usr/share/dbus-1
            home=\(user.home)
            \(userChoosesKeygate ? """
                runuser -u \(user.name) -- mkdir -p "$home/.local/share/dbus-1/services"
                runuser -u \(user.name) -- cp /usr/local/share/keygate/dbus-1/services/org.freedesktop.secrets.service "$home/.local/share/dbus-1/services/"
                """ : "")
            env_user() { runuser -u \(user.name) -- env -i HOME="$home" PATH=\(tools):/usr/bin:/bin DBUS_SESSION_BUS_ADDRESS="unix:path=$work/run/bus" "$@"; }
            mkdir "$work/run"; chown \(user.name): "$work/run"
            runuser -u \(user.name) -- env -i HOME="$home" PATH=/usr/bin:/bin dbus-daemon --session --address="unix:path=$work/run/bus" --nofork --nopidfile &
            bus=$!
            for i in $(seq 100); do [ -S "$work/run/bus" ] && break; sleep 0.05; done
            \(statusFirst ? "echo storeChoice=$(env_user keygate status 2>&1 | grep '^store-choice:')" : "")
            echo before=$(env_user keygate doctor 2>&1 | grep secret-service-provider | head -1)
            start=$(date +%s%N)
            env_user dbus-send --session --print-reply --reply-timeout=20000 --dest=org.freedesktop.DBus / \\
                org.freedesktop.DBus.StartServiceByName string:org.freedesktop.secrets uint32:0 >/dev/null 2>"$work/start.err"
            echo started=$?
            echo startError=$(tr "\\n" " " < "$work/start.err")
            echo activationMs=$(( ($(date +%s%N) - start) / 1000000 ))
            pid=$(env_user dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / \\
                org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '{print $NF}')
            echo owner=$(readlink /proc/$pid/exe)
            echo after=$(env_user keygate doctor 2>&1 | grep secret-service-provider | head -1)
            kill $pid 2>/dev/null; kill $bus 2>/dev/null; wait $bus 2>/dev/null
            pkill -u \(user.name) -x gnome-keyring-d 2>/dev/null
            umount /usr/share/dbus-1 /usr/local/libexec /usr/local/share
            rm -rf "$work"
            """
        return try Subprocess.run(["unshare", "--mount", "bash", "-c", script], environment: TestUser.systemEnvironment, timeout: 120)
    }

    func test_withGnomeKeyringInstalled_theBusStillStartsGnomeKeyring() throws {
        let r = try activate(hideGnomeKeyring: false, userChoosesKeygate: false)
        let v = r.values
        XCTAssertEqual(v["started"], "0", r.summary)
        XCTAssertEqual(v["owner"], "/usr/bin/gnome-keyring-daemon", "installing Keygate changed nobody's provider: \(r.summary)")
        XCTAssertTrue(v["before"]?.contains("/usr/bin/gnome-keyring-daemon") == true && v["before"]?.contains("not Keygate's") == true,
                      "doctor names the file the bus would use: \(r.summary)")
        XCTAssertTrue(v["after"]?.contains("gnome-keyring, not Keygate's") == true, r.summary)
    }

    func test_withNoOtherProvider_theBusStartsKeygates() throws {
        let r = try activate(hideGnomeKeyring: true, userChoosesKeygate: false)
        let v = r.values
        XCTAssertEqual(v["started"], "0", r.summary)
        XCTAssertEqual(v["owner"], "/usr/local/libexec/keygate/keygate-secret-service", r.summary)
        XCTAssertTrue(v["before"]?.contains("/usr/local/libexec/keygate/keygate-secret-service") == true
                      && v["before"]?.contains("Keygate's own") == true, r.summary)
        XCTAssertTrue(v["after"]?.contains("is Keygate's own") == true, r.summary)
        print("activation to owning the name: \(v["activationMs"] ?? "?") ms")
    }

    /// Keygate's own door over the same store: the CLI's `auto` store choice asks the Secret
    /// Service (which activates Keygate's daemon), sees that the one answering is Keygate's, and
    /// reads the embedded store directly: no second sealing, no round trip through its own daemon.
    func test_theCLI_findingKeygatesDaemon_readsTheEmbeddedStoreDirectly() throws {
        let r = try activate(hideGnomeKeyring: true, userChoosesKeygate: false, statusFirst: true)
        let v = r.values
        XCTAssertTrue(v["storeChoice"]?.hasPrefix("store-choice: embedded") == true, r.summary)
        XCTAssertTrue(v["storeChoice"]?.contains("Keygate's own Secret Service (keygate-secret-service) answers") == true, r.summary)
        XCTAssertEqual(v["owner"], "/usr/local/libexec/keygate/keygate-secret-service", r.summary)
    }

    func test_aUserWhoChoosesKeygate_getsKeygates_evenWithGnomeKeyringInstalled() throws {
        let r = try activate(hideGnomeKeyring: false, userChoosesKeygate: true)
        let v = r.values
        XCTAssertEqual(v["started"], "0", r.summary)
        XCTAssertEqual(v["owner"], "/usr/local/libexec/keygate/keygate-secret-service", r.summary)
        XCTAssertTrue(v["after"]?.contains("is Keygate's own") == true, r.summary)
    }
}
