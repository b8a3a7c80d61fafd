// swift-tools-version:6.0
// library-read: the benchmark's in-process client of the Keygate library. It reads one
// item in a loop (Keychain.data(for:)) and fills the store quickly (--populate), for
// bench/run. A separate package so that the Keygate package itself carries no bench code;
// it depends on the checkout two folders up, whatever that folder is called.
import Foundation
import PackageDescription

let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

let package = Package(
    name: "KeygateLibraryRead",
    dependencies: [.package(path: root.path)],
    targets: [
        .executableTarget(
            name: "library-read",
            dependencies: [.product(name: "Keygate", package: root.lastPathComponent.lowercased())]
        ),
    ]
)
