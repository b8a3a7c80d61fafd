// The keyrings.keygate backend for Python's keyring, as a real user: pip installs
// contrib/python into a fresh venv (Debian's keyring and SecretStorage visible
// through --system-site-packages, so nothing is downloaded), then the real keyring
// CLI (`python -m keyring`) and the library API are driven against the built keygate:
// keyring picks Keygate over SecretStorage and its chainer when keygate is on PATH,
// passwords round-trip and are the same items `keygate get` reads, get_credential
// finds the account, and exit 36 becomes KeyringLocked at once, never a hang.
import Foundation
import KeygateTestSupport
import XCTest

final class PythonKeyringTests: XCTestCase {
    private func harness() throws -> CLIUserHarness {
        try Requirement.require(CLIUserHarness.hasTool("python3"), "python3")
        let probe = try Subprocess.run(["/usr/bin/python3", "-c", "import venv, ensurepip, keyring, secretstorage, setuptools"])
        try Requirement.require(probe.status == 0, "python3-venv, python3-keyring, python3-secretstorage, python3-setuptools (scripts/install-deps)")
        let h = try CLIUserHarness()
        let copy = h.user.home + "/keyrings-keygate"
        _ = try Subprocess.run(["cp", "-r", PackagePaths.root + "/contrib/python", copy])
        for leftover in ["build", "keyrings.keygate.egg-info"] { try? FileManager.default.removeItem(atPath: copy + "/" + leftover) }
        _ = try Subprocess.run(["chown", "-R", "\(h.user.name):", copy])
        return h
    }

    private static let venv = """
        cd "$HOME"
        /usr/bin/python3 -m venv --system-site-packages venv
        venv/bin/pip install -q --no-deps --no-build-isolation --no-index ./keyrings-keygate >pip.log 2>&1; echo pip=$?
        PY="$HOME/venv/bin/python"
        """

    func test_keyringCLI_prefersKeygate_andRoundTripsThroughTheSameItems() throws {
        let h = try harness()
        let r = try h.run(Self.venv + "\n" + CLIUserHarness.spy(on: "keygate") + """

            export PATH="$HOME/spy:$PATH"
            "$PY" -m keyring --list-backends | sed 's/^/backend: /'
            echo chosen=$("$PY" -c 'import keyring; print(type(keyring.get_keyring()).__name__)')
            printf 'py-secret-1\\n' | "$PY" -m keyring set pypi-upload alice 2>/dev/null; echo set=$?
            printf 'cli=%s\\n' "$("$PY" -m keyring get pypi-upload alice)"
            printf 'keygate=%s\\n' "$(keygate get -s pypi-upload -a alice)"
            printf %s from-keygate | keygate add -s tool -a bob
            printf 'fromkeygate=%s\\n' "$("$PY" -m keyring get tool bob)"
            echo spied=$(grep -c '^argv: add -U -s pypi-upload -a alice --access none$' spy.log)
            echo leaked=$(grep -c py-secret-1 spy.log)
            "$PY" -m keyring get pypi-upload nobody; echo missing=$?
            "$PY" -m keyring del pypi-upload alice; echo del=$?
            "$PY" -m keyring get pypi-upload alice; echo gone=$?
            echo noPath=$(PATH="$HOME/venv/bin:/usr/bin:/bin" "$PY" -m keyring --list-backends | grep -c keygate)
            """)
        let v = r.values
        XCTAssertEqual(v["pip"], "0", "pip install ./contrib/python: \(r.summary)")
        XCTAssertTrue(r.out.contains("backend: keyrings.keygate.KeygateKeyring (priority: 15)"), "discovered through the entry point: \(r.summary)")
        XCTAssertTrue(r.out.contains("backend: keyring.backends.SecretService.Keyring (priority: 5)"),
                      "SecretStorage is viable too, and ranks below: \(r.summary)")
        r.assertValues(["chosen": "KeygateKeyring", "set": "0", "cli": "py-secret-1"])
        XCTAssertEqual(v["spied"], "1", "the backend ran keygate add, with no access control for scripts: \(r.summary)")
        XCTAssertEqual(v["leaked"], "0", "the password was in no argument or environment of keygate: \(r.summary)")
        XCTAssertEqual(v["keygate"], "py-secret-1", "keyring's password is a Keygate item: \(r.summary)")
        XCTAssertEqual(v["fromkeygate"], "from-keygate", r.summary)
        XCTAssertEqual(v["missing"], "1", "keyring get of a missing password exits 1: \(r.summary)")
        XCTAssertEqual(v["del"], "0", r.summary)
        XCTAssertEqual(v["gone"], "1", r.summary)
        XCTAssertEqual(v["noPath"], "0", "without keygate on PATH the backend is not offered: \(r.summary)")
    }

    func test_libraryAPI_twineStyle_credentials_deleteErrors_andLockedIsKeyringLocked() throws {
        let h = try harness()
        let script = """
        import keyring
        from keyring.errors import PasswordDeleteError
        kr = keyring.get_keyring()
        print("backend=" + type(kr).__name__)
        keyring.set_password("https://upload.pypi.org/legacy/", "__token__", "pypi-AgEI tok=en")
        c = keyring.get_credential("https://upload.pypi.org/legacy/", None)
        print("cred.user=" + c.username); print("cred.pass=" + c.password)
        print("cred.none=" + str(keyring.get_credential("https://nowhere.test/", None)))
        print("cred.named=" + keyring.get_credential("https://upload.pypi.org/legacy/", "__token__").password)
        try:
            keyring.delete_password("https://upload.pypi.org/legacy/", "nobody"); print("delmissing=no error")
        except PasswordDeleteError:
            print("delmissing=PasswordDeleteError")
        """
        let lockedScript = """
        import time, keyring
        from keyring.errors import KeyringLocked
        start = time.monotonic()
        try:
            keyring.get_password("gated", "g"); print("locked=no error")
        except KeyringLocked:
            print("locked=KeyringLocked")
        print("seconds=%d" % (time.monotonic() - start))
        """
        try h.writeUserFile("locked.py", lockedScript, mode: 0o600)
        try h.writeUserFile("twine_like.py", script, mode: 0o600)
        let r = try h.run(Self.venv + """

            timeout 60 "$PY" twine_like.py; echo py=$?
            printf %s g | keygate add -s gated -a g --access user-presence
            keygate lock
            env -u KEYGATE_ASKPASS timeout 60 "$PY" locked.py; echo pylocked=$?
            """)
        let v = r.values
        r.assertValues([
            "pip": "0", "backend": "KeygateKeyring", "cred.user": "__token__", "cred.pass": "pypi-AgEI tok=en",
            "cred.none": "None", "cred.named": "pypi-AgEI tok=en", "delmissing": "PasswordDeleteError"
        ])
        XCTAssertEqual(v["locked"], "KeyringLocked", "no terminal, no askpass: exit 36 is KeyringLocked: \(r.summary)")
        XCTAssertLessThan(Int(v["seconds"] ?? "99") ?? 99, 10, "it failed at once: \(r.summary)")
        XCTAssertEqual(v["py"], "0", r.summary)
        XCTAssertEqual(v["pylocked"], "0", r.summary)
    }

    /// The .dist-info `make install` and the .deb install beside the backend says what pyproject.toml says:
    /// the name, the version, and the entry point keyring finds backends by.
    func test_installedDistInfo_matchesPyproject() throws {
        let root = PackagePaths.root + "/contrib/python"
        let pyproject = try String(contentsOfFile: root + "/pyproject.toml", encoding: .utf8)
        let version = try XCTUnwrap(pyproject.split(separator: "\n").first { $0.hasPrefix("version = ") }?
            .split(separator: "\"").dropFirst().first.map(String.init))
        let distInfo = root + "/keyrings_keygate-\(version).dist-info"
        let metadata = try String(contentsOfFile: distInfo + "/METADATA", encoding: .utf8)
        XCTAssertTrue(metadata.contains("\nName: keyrings.keygate\n"), metadata)
        XCTAssertTrue(metadata.contains("\nVersion: \(version)\n"), metadata)
        XCTAssertTrue(pyproject.contains("[project.entry-points.\"keyring.backends\"]\nkeygate = \"keyrings.keygate\""), pyproject)
        XCTAssertEqual(try String(contentsOfFile: distInfo + "/entry_points.txt", encoding: .utf8),
                       "[keyring.backends]\nkeygate = keyrings.keygate\n")
        let folders = try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasSuffix(".dist-info") }
        XCTAssertEqual(folders, ["keyrings_keygate-\(version).dist-info"], "one .dist-info, of this version")
    }
}
