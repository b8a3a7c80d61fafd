// The library's layers (docs/ARCHITECTURE.md): KeygateCore at the bottom, KeygateStorage and
// KeygateAuthentication beside each other above it, Keygate above them, and the CLI, the
// Security surface and the executables on top. SwiftPM refuses a cycle, but not an import of a
// module the target never declared (it builds when the module happens to be built first), nor
// a Package.swift edit that lets a lower layer depend on a higher one. This test reads
// Package.swift's declared dependencies and every source file's `import` lines, and fails on
// either.
import Foundation
import KeygateTestSupport
import XCTest

enum LayerCheck {
    /// Each Swift target of the package, by layer: a target may depend on and import only
    /// targets of a lower layer. A new target must be placed here on purpose.
    static let layers: [String: Int] = [
        // CGatekeeperStart is C (the gatekeeper's first lines, before the Swift runtime): it imports nothing.
        "KeygateCore": 0, "CGatekeeperStart": 0,
        "KeygateStorage": 1, "KeygateAuthentication": 1, "KeygateGateWire": 1, "KeygateSystemBus": 1, "KeygateIdentity": 1,
        "Keygate": 2, "KeygateGatekeeper": 2,
        // KeygateSecretService (the Secret Service daemon's objects) sits beside the CLI: a door of its own onto the library.
        "KeygateCLI": 3, "KeygateSecurity": 3, "KeygateSecretService": 3, "keygate-gatekeeper": 3, "keygate-pam-helper": 3,
        "keygate": 4, "Security": 4, "LocalAuthentication": 4, "keygate-secret-service": 4,
    ]

    /// Targets only some programs may link: the gatekeeper's root code goes into the two programs
    /// that run as root, never into a library or program that users' processes load.
    static let linkedOnlyBy: [String: Set<String>] = [
        "KeygateGatekeeper": ["keygate-gatekeeper", "keygate-pam-helper"],
        // Changing ids (setresuid): root's programs and the keygate CLI (root's host-protector commands), no library.
        "KeygateIdentity": ["KeygateGatekeeper", "keygate-gatekeeper", "keygate-pam-helper", "KeygateCLI", "keygate"],
    ]

    /// Each C library is reached by the targets named here and no other (docs/ARCHITECTURE.md):
    /// Linux-PAM by authentication and the PAM helper, keyutils, libsodium and tpm2-tss by the core,
    /// sd-bus and SQLite by storage, libcrypto by the Secret Service daemon's sessions. CSystem (libc wrappers) is the system door of every layer.
    static let cLibraryOwners: [String: Set<String>] = [
        "CPAM": ["KeygateAuthentication", "keygate-pam-helper"],
        "CKeyutils": ["KeygateCore"], "CSodium": ["KeygateCore"], "CTSS2": ["KeygateCore"],
        "CSDBus": ["KeygateStorage", "KeygateSystemBus"], "CSQLite": ["KeygateStorage"], "CCrypto": ["KeygateSecretService"],
        "CGatekeeperStart": ["keygate-gatekeeper"],
    ]

    struct Target {
        var name: String
        var kind: String
        var dependencies: [String]
        var path: String
    }

    /// The targets Package.swift declares: `.target(name: "X", dependencies: [...], path: "...")`,
    /// spread over any number of lines.
    static func declaredTargets(packageSwift: String) throws -> [Target] {
        let pattern = #"\.(target|executableTarget|testTarget|systemLibrary)\(\s*name:\s*"([^"]+)"(?:\s*,\s*dependencies:\s*\[([^\]]*)\])?(?:[^()]*?path:\s*"([^"]+)")?"#
        let regex = try NSRegularExpression(pattern: pattern)
        let text = packageSwift as NSString
        return regex.matches(in: packageSwift, range: NSRange(location: 0, length: text.length)).map { match in
            func group(_ i: Int) -> String? {
                let r = match.range(at: i)
                return r.location == NSNotFound ? nil : text.substring(with: r)
            }
            let kind = group(1) ?? "", name = group(2) ?? ""
            let dependencies = (group(3) ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: " \n\"")) }.filter { !$0.isEmpty }
            let path = group(4) ?? ((kind == "testTarget" ? "Tests/" : "Sources/") + name)
            return Target(name: name, kind: kind, dependencies: dependencies, path: path)
        }
    }

    /// The modules a Swift file imports, whatever the access level or attribute.
    static func imports(in source: String) -> Set<String> {
        let pattern = #"(?m)^\s*(?:@\w+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)"#
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let text = source as NSString
        return Set(regex.matches(in: source, range: NSRange(location: 0, length: text.length)).map {
            text.substring(with: $0.range(at: 1)) })
    }

    /// Every breach of the layer order, in words; empty when the layers hold.
    /// `dependencies` and `imports` are keyed by target name (imports by module name, in which
    /// a target's dashes are underscores).
    static func violations(dependencies: [String: [String]], imports: [String: Set<String>]) -> [String] {
        var found: [String] = []
        let moduleToTarget = Dictionary(uniqueKeysWithValues: layers.keys.map { ($0.replacingOccurrences(of: "-", with: "_"), $0) })
        func closure(_ name: String) -> Set<String> {
            var seen: Set<String> = [], stack = dependencies[name] ?? []
            while let next = stack.popLast() {
                if seen.insert(next).inserted { stack += dependencies[next] ?? [] }
            }
            return seen
        }
        for (target, deps) in dependencies.sorted(by: { $0.key < $1.key }) {
            for (restricted, allowed) in linkedOnlyBy.sorted(by: { $0.key < $1.key })
            where target != restricted && !allowed.contains(target) && closure(target).contains(restricted) {
                found.append("\(target) links \(restricted), which only \(allowed.sorted().joined(separator: " and ")) may link")
            }
            guard let rank = layers[target] else {
                found.append("\(target) is in no layer: place it in LayerCheck.layers")
                continue
            }
            for dep in deps.sorted() {
                if let depRank = layers[dep], depRank >= rank {
                    found.append("\(target) (layer \(rank)) depends on \(dep) (layer \(depRank)) in Package.swift")
                }
            }
            for module in (imports[target] ?? []).sorted() {
                if let owners = cLibraryOwners[module], !owners.contains(target) {
                    found.append("\(target) imports \(module), which only \(owners.sorted().joined(separator: " and ")) may import")
                }
            }
            for dep in deps.sorted() {
                if let owners = cLibraryOwners[dep], !owners.contains(target) {
                    found.append("\(target) depends on \(dep), which only \(owners.sorted().joined(separator: " and ")) may link")
                }
            }
            let reachable = closure(target)
            for module in (imports[target] ?? []).sorted() {
                guard let imported = moduleToTarget[module], imported != target else { continue }
                let importedRank = layers[imported] ?? Int.max
                if importedRank >= rank {
                    found.append("\(target) (layer \(rank)) imports \(imported) (layer \(importedRank))")
                } else if !reachable.contains(imported) {
                    found.append("\(target) imports \(imported) but does not declare it (directly or through a dependency) in Package.swift")
                }
            }
        }
        return found
    }
}

final class LayeringTests: XCTestCase {
    /// The package's own Swift targets (tests excluded: they may import any layer), their
    /// declared dependencies and the modules their sources import.
    private func packageLayers() throws -> (dependencies: [String: [String]], imports: [String: Set<String>]) {
        let root = PackagePaths.root
        let manifest = try String(contentsOfFile: root + "/Package.swift", encoding: .utf8)
        let targets = try LayerCheck.declaredTargets(packageSwift: manifest)
        let swiftTargets = targets.filter { $0.kind == "target" || $0.kind == "executableTarget" }
            .filter { !$0.path.hasPrefix("Tests/") }
        var dependencies: [String: [String]] = [:], imports: [String: Set<String>] = [:]
        for target in swiftTargets {
            dependencies[target.name] = target.dependencies
            let folder = root + "/" + target.path
            guard let files = FileManager.default.enumerator(atPath: folder) else {
                XCTFail("\(target.name): no folder \(folder)")
                continue
            }
            var modules: Set<String> = []
            for case let file as String in files where file.hasSuffix(".swift") {
                modules.formUnion(LayerCheck.imports(in: try String(contentsOfFile: folder + "/" + file, encoding: .utf8)))
            }
            imports[target.name] = modules
        }
        return (dependencies, imports)
    }

    func testEveryTargetImportsOnlyLowerLayers() throws {
        let (dependencies, imports) = try packageLayers()
        // The reading found what Package.swift and the sources hold, so an empty result means something.
        XCTAssertEqual(Set(dependencies.keys), Set(LayerCheck.layers.keys), "Package.swift's Swift targets and the layer table differ")
        XCTAssertEqual(dependencies["KeygateStorage"]?.contains("KeygateCore"), true)
        XCTAssertEqual(dependencies["Keygate"]?.contains("KeygateAuthentication"), true)
        XCTAssertEqual(imports["KeygateStorage"]?.contains("KeygateCore"), true)
        XCTAssertEqual(imports["KeygateAuthentication"]?.contains("KeygateCore"), true)
        XCTAssertEqual(imports["KeygateCore"]?.contains("CSodium"), true)
        XCTAssertEqual(LayerCheck.violations(dependencies: dependencies, imports: imports), [])
    }

    func testALowerTargetImportingAHigherOneFails() throws {
        var (dependencies, imports) = try packageLayers()
        imports["KeygateCore", default: []].insert("Keygate")
        XCTAssertEqual(LayerCheck.violations(dependencies: dependencies, imports: imports),
                       ["KeygateCore (layer 0) imports Keygate (layer 2)"])
        imports["KeygateCore"]?.remove("Keygate")
        // Side by side is not below: storage may not reach into authentication, nor the reverse.
        imports["KeygateStorage", default: []].insert("KeygateAuthentication")
        XCTAssertEqual(LayerCheck.violations(dependencies: dependencies, imports: imports),
                       ["KeygateStorage (layer 1) imports KeygateAuthentication (layer 1)"])
        imports["KeygateStorage"]?.remove("KeygateAuthentication")
        // An executable's module name has underscores for its target's dashes.
        imports["KeygateCLI", default: []].insert("keygate_gatekeeper")
        XCTAssertEqual(LayerCheck.violations(dependencies: dependencies, imports: imports),
                       ["KeygateCLI (layer 3) imports keygate-gatekeeper (layer 3)"])
    }

    func testAnUpwardDependencyInPackageSwiftFails() throws {
        var (dependencies, imports) = try packageLayers()
        dependencies["KeygateCore", default: []].append("KeygateStorage")
        XCTAssertEqual(LayerCheck.violations(dependencies: dependencies, imports: imports),
                       ["KeygateCore (layer 0) depends on KeygateStorage (layer 1) in Package.swift"])
        dependencies["KeygateCore"]?.removeAll { $0 == "KeygateStorage" }
        // An import of a lower layer the target never declared builds only by luck of build order.
        dependencies["KeygateSecurity"] = ["CSystem"]
        imports["KeygateSecurity", default: []].insert("KeygateCore")
        let found = LayerCheck.violations(dependencies: dependencies, imports: imports)
        XCTAssertTrue(found.contains("KeygateSecurity imports KeygateCore but does not declare it (directly or through a dependency) in Package.swift"), "\(found)")
        // A new target must be placed in a layer on purpose.
        dependencies["KeygateNew"] = ["KeygateCore"]
        XCTAssertTrue(LayerCheck.violations(dependencies: dependencies, imports: imports)
            .contains("KeygateNew is in no layer: place it in LayerCheck.layers"))
    }

    /// Root's code (the gatekeeper's server, daemon, secrets and records) is linked by the two
    /// programs that run as root and by nothing else: no product users import contains it.
    func testOnlyTheRootProgramsLinkTheGatekeeper() throws {
        var (dependencies, imports) = try packageLayers()
        XCTAssertEqual(dependencies["keygate-gatekeeper"]?.contains("KeygateGatekeeper"), true)
        XCTAssertEqual(dependencies["keygate-pam-helper"]?.contains("KeygateGatekeeper"), true)
        XCTAssertEqual(dependencies["Keygate"]?.contains("KeygateGateWire"), true, "the client speaks the wire protocol")
        XCTAssertEqual(LayerCheck.violations(dependencies: dependencies, imports: imports), [])
        // The library users import reaching for root's code is refused, directly or through another target.
        dependencies["Keygate", default: []].append("KeygateGatekeeper")
        XCTAssertTrue(LayerCheck.violations(dependencies: dependencies, imports: imports)
            .contains("Keygate links KeygateGatekeeper, which only keygate-gatekeeper and keygate-pam-helper may link"))
        XCTAssertTrue(LayerCheck.violations(dependencies: dependencies, imports: imports)
            .contains("KeygateCLI links KeygateGatekeeper, which only keygate-gatekeeper and keygate-pam-helper may link"))
        dependencies["Keygate"]?.removeAll { $0 == "KeygateGatekeeper" }
        imports["Keygate", default: []].insert("KeygateGatekeeper")
        XCTAssertEqual(LayerCheck.violations(dependencies: dependencies, imports: imports),
                       ["Keygate (layer 2) imports KeygateGatekeeper (layer 2)"])
        // No product of Package.swift contains it either.
        let manifest = try String(contentsOfFile: PackagePaths.root + "/Package.swift", encoding: .utf8)
        let products = try NSRegularExpression(pattern: #"\.(?:library|executable)\(name:\s*"[^"]+",\s*targets:\s*\[([^\]]*)\]"#)
        let text = manifest as NSString
        let listed = products.matches(in: manifest, range: NSRange(location: 0, length: text.length)).map { text.substring(with: $0.range(at: 1)) }
        XCTAssertGreaterThanOrEqual(listed.count, 5, "the products were not read")
        XCTAssertFalse(listed.contains { $0.contains("\"KeygateGatekeeper\"") }, "a product contains the gatekeeper's code: \(listed)")
    }

    /// Root's administration lives in root's targets: no target a library product contains (the
    /// closure of Keygate, KeygateSecurity, Security and LocalAuthentication, which apps link)
    /// removes root's per-uid state or names a path of it; `keygate forget-user` asks the installed
    /// gatekeeper (`--forget-user`, KeygateGatekeeper's ForgetUser) to do it as root. And the setuid
    /// gatekeeper's own closure holds no item store.
    func testRootsAdministrationIsNotInTheLibraryAppsLink_andTheGatekeeperLinksNoStore() throws {
        let (dependencies, _) = try packageLayers()
        var library: Set<String> = [], stack = ["Keygate", "KeygateSecurity", "Security", "LocalAuthentication"]
        while let next = stack.popLast() {
            guard LayerCheck.layers[next] != nil else { continue }   // a C module: no Swift source of its own
            if library.insert(next).inserted { stack += dependencies[next] ?? [] }
        }
        XCTAssertTrue(library.isSuperset(of: ["Keygate", "KeygateCore", "KeygateStorage", "KeygateGateWire"]), "\(library)")
        XCTAssertFalse(library.contains("KeygateGatekeeper"))
        let rootsOwn = ["perUIDPaths(", "stateDirectory(uid", "recordPath(uid", "recordLockPath(uid", "fingerUnlockPath(uid",
                        "sessionCounterPath(uid", "auditUserPath(uid", "auditUserPreviousPath(uid", "enum ForgetUser",
                        "enum HostProtectorAdmin", "UserIdentity."]
        var found: [String] = []
        for (file, text) in try PackagePaths.swiftSources() {
            let target = String(file.split(separator: "/").first ?? "")
            // GatekeeperPaths defines them (the wire's one list of root's paths); it removes nothing.
            guard library.contains(target), file != "KeygateGateWire/GatekeeperPaths.swift" else { continue }
            for name in rootsOwn where text.contains(name) { found.append("\(file): \(name)") }
        }
        XCTAssertEqual(found, [], "root's per-uid state is root's programs' business")
        // The setuid gatekeeper links a narrow target for fprintd's probe and its deadlines, not the
        // Secret Service client and SQLite (KeygateStorage, CSQLite).
        var rootProgram: Set<String> = [], next = ["keygate-gatekeeper"]
        while let name = next.popLast() {
            if rootProgram.insert(name).inserted { next += dependencies[name] ?? [] }
        }
        XCTAssertTrue(rootProgram.isSuperset(of: ["KeygateGatekeeper", "KeygateSystemBus", "KeygateCore"]), "\(rootProgram)")
        XCTAssertFalse(rootProgram.contains("KeygateStorage") || rootProgram.contains("CSQLite"),
                       "the setuid gatekeeper links the Secret Service client or SQLite: \(rootProgram.sorted())")
        // Changing ids (UserIdentity, setresuid) is not in the library either: root's host-protector
        // commands live in the keygate CLI, beside it.
        XCTAssertFalse(library.contains("KeygateIdentity"), "a library product links the code that changes ids: \(library.sorted())")
        let admin = try String(contentsOfFile: PackagePaths.root + "/Sources/KeygateCLI/Admin/HostProtectorAdmin.swift", encoding: .utf8)
        XCTAssertTrue(admin.contains("UserIdentity.run"), "the host protector's commands act as the user from the CLI")
        let gatekeeper = try String(contentsOfFile: PackagePaths.root + "/Sources/KeygateGatekeeper/ForgetUser.swift", encoding: .utf8)
        XCTAssertTrue(gatekeeper.contains("GatekeeperPaths.perUIDPaths"), "the gatekeeper's ForgetUser walks the one list")
    }

    /// The two programs root starts (keygate-pam-helper at every login, keygate-gatekeeper at gated
    /// reads) link no Foundation, no Swift concurrency runtime (and with it no libdispatch) and no
    /// Regex library: ld.so relocates each one's metadata at every start (docs/DECISIONS.md, "The
    /// login helper links no Foundation"). Read from the built programs' dynamic sections (the test
    /// build links the Swift libraries dynamically); the keygate CLI, which links them, shows that
    /// the check can fail.
    func testTheRootProgramsLinkNoFoundationConcurrencyOrRegex() throws {
        let heavy = ["libFoundation", "libswift_Concurrency", "libdispatch", "libswift_StringProcessing", "libswift_RegexParser"]
        func needed(_ program: String) throws -> [String] {
            let result = try Subprocess.run(["readelf", "-d", PackagePaths.buildProducts + "/" + program])
            XCTAssertEqual(result.status, 0, "readelf -d \(program): \(result.err)")
            return result.out.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map(String.init)
        }
        let cli = try needed("keygate")
        XCTAssertTrue(cli.contains { $0.contains("libswiftCore") },
                      "the test build links the Swift runtime statically, so its NEEDED entries say nothing: \(cli)")
        XCTAssertTrue(cli.contains { line in heavy.contains { line.contains($0) } }, "the control: the CLI links Foundation: \(cli)")
        for program in ["keygate-pam-helper", "keygate-gatekeeper"] {
            let found = try needed(program).filter { line in heavy.contains { line.contains($0) } }
            XCTAssertEqual(found, [], "\(program) links a library it must start without")
        }
    }

    /// Each C library is touched by its own layer only: the core links no libpam for a setresuid
    /// wrapper (it is CSystem's), and storage's SQLite stays storage's.
    func testEachCLibraryIsReachedOnlyByItsOwners() throws {
        var (dependencies, imports) = try packageLayers()
        XCTAssertEqual(dependencies["KeygateCore"]?.contains("CPAM"), false, "the core does not link libpam")
        XCTAssertEqual(imports["KeygateAuthentication"]?.contains("CPAM"), true, "the imports were read")
        imports["KeygateCore", default: []].insert("CPAM")
        dependencies["KeygateCore", default: []].append("CPAM")
        XCTAssertEqual(LayerCheck.violations(dependencies: dependencies, imports: imports),
                       ["KeygateCore imports CPAM, which only KeygateAuthentication and keygate-pam-helper may import",
                        "KeygateCore depends on CPAM, which only KeygateAuthentication and keygate-pam-helper may link"])
    }

    func testImportLinesAreReadWhateverTheirAttributes() {
        let source = """
            // import NotThis (a comment)
            import Foundation
            @_exported import KeygateCore
            internal import Glibc
            package import CSystem
            @testable import KeygateStorage
            import struct KeygateAuthentication.Prompter
            let text = "import NotThisEither"
            """
        XCTAssertEqual(LayerCheck.imports(in: source),
                       ["Foundation", "KeygateCore", "Glibc", "CSystem", "KeygateStorage", "KeygateAuthentication"])
    }
}
