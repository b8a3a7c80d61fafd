// Where the package's own files are, for tests that run its scripts and binaries.
import Foundation

public enum PackagePaths {
    /// The package root, found from this file's location.
    public static var root: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }

    public static var scripts: String { root + "/scripts" }

    /// The folder holding the built products of the running test configuration.
    public static var buildProducts: String {
        // The test bundle lives in the products folder (e.g. .build/debug/KeygatePackageTests.xctest).
        let bundle = Bundle.main.bundleURL.path
        let env = ProcessInfo.processInfo.environment
        if let forced = env["KEYGATE_BUILD_PRODUCTS"], !forced.isEmpty { return forced }
        for candidate in [Bundle.main.bundleURL.deletingLastPathComponent().path, bundle] {
            if FileManager.default.isExecutableFile(atPath: candidate + "/keygate") { return candidate }
        }
        return root + "/.build/debug"
    }

    /// The built `keygate` CLI.
    public static var keygateBinary: String { buildProducts + "/keygate" }

    /// The built `keygate-secret-service`: beside keygate in a build folder, or where `make install`
    /// puts it (<prefix>/libexec/keygate/) when the products folder is an installed bin/.
    public static var secretServiceBinary: String {
        let beside = buildProducts + "/keygate-secret-service"
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let installed = URL(fileURLWithPath: buildProducts).deletingLastPathComponent().path + "/libexec/keygate/keygate-secret-service"
        return FileManager.default.isExecutableFile(atPath: installed) ? installed : beside
    }

    /// The text of every Swift file under `folder` of the package (Sources by default), by its
    /// path below that folder: what the source-rule tests (layering, system door, environment
    /// reads, spawn, read path) scan.
    public static func swiftSources(under folder: String = "Sources") throws -> [String: String] {
        let base = root + "/" + folder
        var out: [String: String] = [:]
        for case let file as String in FileManager.default.enumerator(atPath: base) ?? NSEnumerator() where file.hasSuffix(".swift") {
            out[file] = try String(contentsOfFile: base + "/" + file, encoding: .utf8)
        }
        return out
    }
}
