// libsystemd (sd-bus) and SQLite are loaded on first use, not linked (Sources/CSystem/lazy_library.h,
// Sources/CSDBus/shim.h, Sources/CSQLite/shim.h): the shims' declarations must be exactly
// the libraries' own, the built binary must not need either library, and a library
// that cannot be loaded must end in a clear "not available" (exit 53) that says what
// to install, never a crash.
import Foundation
import KeygateTestSupport
import XCTest

final class LazyLibraryTests: XCTestCase {
    private struct Shim {
        let module: String
        let checkMacro: String
        let realHeader: String
        let pkgConfig: String?
        let loadError: String
    }

    private static let shims = [
        Shim(module: "CSDBus", checkMacro: "KG_SDBUS_CHECK", realHeader: "systemd/sd-bus.h", pkgConfig: "libsystemd",
             loadError: "kg_sdbus_load_error"),
        Shim(module: "CSQLite", checkMacro: "KG_SQLITE_CHECK", realHeader: "sqlite3.h", pkgConfig: nil,
             loadError: "kg_sqlite_load_error"),
        // The shim includes the rest of OpenSSL's headers itself in check mode (libssl-dev).
        Shim(module: "CCrypto", checkMacro: "KG_CRYPTO_CHECK", realHeader: "openssl/evp.h", pkgConfig: nil,
             loadError: "kg_crypto_load_error"),
    ]

    /// Compiles `shim`'s header (from `sources`) against the library's real header, in check mode.
    private func compileCheck(_ shim: Shim, sources: String) throws -> ProcessResult {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/cc"), "a C compiler (apt-get install gcc)")
        var flags: [String] = []
        if let package = shim.pkgConfig {
            let pc = try Subprocess.run(["pkg-config", "--cflags", package])
            try Requirement.require(pc.status == 0, "pkg-config and \(package) (apt-get install pkg-config libsystemd-dev)")
            flags = pc.out.split(whereSeparator: \.isWhitespace).map(String.init)
        }
        let program = """
            #include <\(shim.realHeader)>
            #define \(shim.checkMacro) 1
            #include "\(sources)/\(shim.module)/shim.h"
            int main(void) { return \(shim.loadError)() != 0; }
            """
        let dir = try temporaryDirectory("kg-shim")
        let file = dir + "/check.c"
        try Data(program.utf8).write(to: URL(fileURLWithPath: file))
        return try Subprocess.run(["/usr/bin/cc", "-std=c11", "-Wall", "-Werror"] + flags + [file, "-o", dir + "/check"])
    }

    /// A fresh folder, removed when the test ends.
    private func temporaryDirectory(_ prefix: String) throws -> String {
        let path = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func test_eachShim_agreesWithTheLibrarysOwnHeader_andLoadsIt() throws {
        for shim in Self.shims {
            let r = try compileCheck(shim, sources: PackagePaths.root + "/Sources")
            XCTAssertEqual(r.status, 0, "\(shim.module)/shim.h disagrees with <\(shim.realHeader)>: \(r.err)")
        }
    }

    func test_librariesOpenDeepBound_exceptUnderASanitizer() throws {
        // RTLD_DEEPBIND resolves a lazy library's own symbols in its own scope first (docs/DECISIONS.md,
        // "A read pays for its own work only");
        // a sanitizer runtime refuses it, so a program built with one must get the usual flags
        // and still load the library.
        let dir = try temporaryDirectory("kg-deepbind")
        let file = dir + "/flags.c"
        try Data("""
            #include "\(PackagePaths.root)/Sources/CSystem/lazy_library.h"
            int main(void) {
                int flags = kg_lazy_open_flags();
                printf("deepbind=%d now=%d loaded=%d\\n", (flags & RTLD_DEEPBIND) != 0, (flags & RTLD_NOW) != 0,
                       dlopen("libsqlite3.so.0", flags) != NULL);
                return 0;
            }
            """.utf8).write(to: URL(fileURLWithPath: file))
        for (sanitized, expected) in [(false, "deepbind=1 now=1 loaded=1"), (true, "deepbind=0 now=1 loaded=1")] {
            let program = dir + (sanitized ? "/asan" : "/plain")
            let built = try Subprocess.run(["/usr/bin/cc", "-std=gnu11", "-Wall", "-Werror"]
                                           + (sanitized ? ["-fsanitize=address"] : []) + [file, "-o", program])
            try Requirement.require(built.status == 0, "a C compiler with AddressSanitizer (apt-get install gcc): \(built.err)")
            let run = try Subprocess.run([program], environment: ["ASAN_OPTIONS": "detect_leaks=0"])
            XCTAssertEqual(run.out.trimmingCharacters(in: .whitespacesAndNewlines), expected,
                           sanitized ? "under ASan" : "without a sanitizer")
        }
    }

    func test_theCheck_catchesAWrongDeclaration() throws {
        // A copy of the shims with one return type and one constant changed must not compile.
        let dir = try temporaryDirectory("kg-shim-bad")
        for module in ["CSDBus", "CSQLite", "CSystem"] {
            try FileManager.default.copyItem(atPath: PackagePaths.root + "/Sources/" + module, toPath: dir + "/" + module)
        }
        let sdbus = dir + "/CSDBus/shim.h", sqlite = dir + "/CSQLite/shim.h"
        let sdbusText = try String(contentsOfFile: sdbus, encoding: .utf8)
        let sqliteText = try String(contentsOfFile: sqlite, encoding: .utf8)
        let badSDBus = sdbusText.replacingOccurrences(of: "X(VALUE, int, sd_bus_message_get_errno,", with: "X(VALUE, long, sd_bus_message_get_errno,")
        let badSQLite = sqliteText.replacingOccurrences(of: "X(SQLITE_DONE, 101)", with: "X(SQLITE_DONE, 102)")
        XCTAssertNotEqual(badSDBus, sdbusText)
        XCTAssertNotEqual(badSQLite, sqliteText)
        try badSDBus.write(toFile: sdbus, atomically: true, encoding: .utf8)
        try badSQLite.write(toFile: sqlite, atomically: true, encoding: .utf8)
        let g = try compileCheck(Self.shims[0], sources: dir)
        XCTAssertNotEqual(g.status, 0)
        XCTAssertTrue(g.err.contains("sd_bus_message_get_errno differs"), g.err)
        let s = try compileCheck(Self.shims[1], sources: dir)
        XCTAssertNotEqual(s.status, 0)
        XCTAssertTrue(s.err.contains("SQLITE_DONE differs"), s.err)
    }

    func test_keygateBinary_needsNeitherLibsystemdNorGLibNorSQLiteNorPAM() throws {
        let needed = try neededLibraries(PackagePaths.keygateBinary)
        for library in ["libsystemd", "libgio", "libgobject", "libglib", "libsqlite3", "libsecret", "libpam"] {
            XCTAssertFalse(needed.contains { $0.contains(library) }, "keygate links \(library): \(needed)")
        }
    }

    func test_thePAMHelper_needsNoLibpam_andALoginMapsNone() throws {
        // keygate-pam-helper runs at every login: libpam (with libaudit and libcap-ng) is the CLI's
        // password check only, loaded when it runs (CPAM/shim.h).
        let helper = PackagePaths.buildProducts + "/keygate-pam-helper"
        try Requirement.require(FileManager.default.isExecutableFile(atPath: helper), "the built keygate-pam-helper (swift build)")
        let needed = try neededLibraries(helper)
        for library in ["libpam", "libaudit", "libcap-ng", "libsystemd", "libsqlite3"] {
            XCTAssertFalse(needed.contains { $0.contains(library) }, "keygate-pam-helper links \(library): \(needed)")
        }
        // A request it refuses still runs its whole start: ld.so's own account names no libpam.
        let run = try Subprocess.run(["-i", "LD_DEBUG=files", helper], stdin: Data("not a request\n".utf8))
        XCTAssertTrue(run.err.contains("file=libsodium.so.23"), "could not read ld.so's account: \(run.err)")
        XCTAssertFalse(run.err.contains("file=libpam.so.0"), "the helper loaded libpam: \(run.err)")
    }

    private func neededLibraries(_ binary: String) throws -> [String] {
        let r = try Subprocess.run(["readelf", "-d", binary])
        try Requirement.require(r.status == 0, "readelf (apt-get install binutils)")
        let needed = r.out.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map(String.init)
        XCTAssertTrue(needed.contains { $0.contains("libsodium") }, "could not read the NEEDED entries of \(binary): \(r.out)")
        return needed
    }

    func test_aSecretServiceRead_loadsLibsystemd_andNoGLib() throws {
        // The store speaks D-Bus through sd-bus: a real read in a real gnome-keyring
        // session maps libsystemd.so.0 and none of GIO, GObject or GLib (ld.so's own account).
        let h = try CLIUserHarness()
        let r = try h.run("""
            printf %s lib-token | KEYGATE_STORE=secret-service keygate add -s lib -a a; echo add=$?
            LD_DEBUG=files KEYGATE_STORE=secret-service keygate get -s lib -a a 2> "$HOME/ld" > "$HOME/out"; echo get=$?
            echo out=$(cat "$HOME/out")
            echo systemd=$(grep -c 'file=libsystemd.so.0 ' "$HOME/ld")
            echo glib=$(grep -c -E 'file=lib(gio|gobject|glib)-2.0.so.0 ' "$HOME/ld")
            secret-tool search --all service lib 2>&1 | grep -ac '^attribute.service = lib$' | sed 's/^/secretTool=/'
            """, extraEnvironment: ["KEYGATE_STORE": ""])
        let v = r.values
        r.assertValues(["add": "0", "get": "0", "out": "lib-token"])
        XCTAssertNotEqual(v["systemd"], "0", "the read did not load libsystemd.so.0: \(r.summary)")
        XCTAssertEqual(v["glib"], "0", "the read loaded GLib: \(r.summary)")
        XCTAssertEqual(v["secretTool"], "1", "secret-tool sees the item as before: \(r.summary)")
    }

    func test_aLibraryThatCannotBeLoaded_isExit53_namingItAndWhatToInstall() throws {
        let dir = try temporaryDirectory("kg-lazy")
        let lib = dir + "/lib", home = dir + "/home"
        try FileManager.default.createDirectory(atPath: lib, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/.local/share/keygate", withIntermediateDirectories: true)
        // Broken copies found first through LD_LIBRARY_PATH: dlopen refuses them.
        for name in ["libsystemd.so.0", "libsqlite3.so.0"] {
            try Data("not an ELF object".utf8).write(to: URL(fileURLWithPath: lib + "/" + name))
        }
        FileManager.default.createFile(atPath: home + "/.local/share/keygate/items.sqlite", contents: Data())
        let cases = [("secret-service", "libsystemd.so.0", "libsystemd0"), ("embedded", "libsqlite3.so.0", "libsqlite3-0")]
        for (store, library, package) in cases {
            let env = ["PATH": "/usr/bin:/bin", "HOME": home, "KEYGATE_STORE": store, "LD_LIBRARY_PATH": lib,
                       "DBUS_SESSION_BUS_ADDRESS": "unix:path=" + dir + "/no-bus"]
            let r = try Subprocess.run([PackagePaths.keygateBinary, "list"], environment: env, timeout: 30)
            XCTAssertEqual(r.status, 53, "\(store): \(r.err)")
            XCTAssertTrue(r.err.contains("could not load \(library)"), "\(store): \(r.err)")
            XCTAssertTrue(r.err.contains("apt-get install \(package)"), "\(store): \(r.err)")
            XCTAssertEqual(r.out, "", "\(store)")
            // The same environment without the broken copies works: the failure was the library's.
            var healthy = env
            healthy["LD_LIBRARY_PATH"] = nil
            if store == "embedded" {
                let ok = try Subprocess.run([PackagePaths.keygateBinary, "list"], environment: healthy, timeout: 30)
                XCTAssertFalse(ok.err.contains("could not load"), ok.err)
            }
        }
    }
}
