// A damaged item, as a provider killed soon after a write leaves it (kwalletd5 killed 3 s after
// an acknowledged add comes back with the item's attributes and an empty secret):
// made here on purpose in a real gnome-keyring alone on a private bus, then looked at with the
// real `keygate` binary. `get`, `exists`, `list` and `doctor` all call it damaged, with the same
// words and what to do, instead of 44, 0, nothing and OK.
import Foundation
import KeygateTestSupport
import XCTest
@testable import KeygateCore
@testable import KeygateStorage

final class DamagedItemCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus
    func test_anItemWithAnEmptySecret_isDamaged_forGetExistsListAndDoctor_alike() throws {
        let session = try ProviderSession(.gnomeKeyring)
        defer { session.stop() }
        let store = SecretServiceStore(connection: SecretServiceConnection(address: session.address, environment: .process()))
        try store.create(ItemAttributes(identity: .generic(service: "issue35-damaged", account: "a")), blob: [], replace: false)
        try store.create(ItemAttributes(identity: .generic(service: "issue35-damaged", account: "b")), blob: [1, 2, 3], replace: false)
        let home = session.folder + "/damaged-home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        var env = session.environment
        env["HOME"] = home
        env["KEYGATE_STORE"] = "secret-service"
        for key in ["XDG_CONFIG_HOME", "XDG_DATA_HOME"] { env.removeValue(forKey: key) }
        let keygate = PackagePaths.keygateBinary

        let get = try Subprocess.run([keygate, "get", "-s", "issue35-damaged", "-a", "a"], environment: env, timeout: 30)
        let exists = try Subprocess.run([keygate, "exists", "-s", "issue35-damaged", "-a", "a"], environment: env, timeout: 30)
        let healthy = try Subprocess.run([keygate, "exists", "-s", "issue35-damaged", "-a", "b"], environment: env, timeout: 30)
        let list = try Subprocess.run([keygate, "list", "-s", "issue35-damaged"], environment: env, timeout: 30)
        let doctor = try Subprocess.run([keygate, "doctor"], environment: env, timeout: 60)

        let words = "the item issue35-damaged/a is damaged: its secret came back empty from the store"
        XCTAssertEqual(get.status, 44, get.err)
        XCTAssertTrue(get.err.contains(words), get.err)
        XCTAssertTrue(get.err.contains("add it again (keygate add -U), which replaces it, or delete it"), get.err)
        XCTAssertEqual(exists.status, 44, exists.err)
        XCTAssertTrue(exists.err.contains(words), exists.err)
        XCTAssertEqual(healthy.status, 0, healthy.err)
        XCTAssertEqual(list.status, 0, list.err)
        XCTAssertTrue(list.out.contains("invalidated: " + words), list.out)
        XCTAssertEqual(list.out.components(separatedBy: "invalidated:").count - 1, 1, "only the damaged item is marked: " + list.out)
        XCTAssertTrue(doctor.out.contains("WARN items: 1 damaged item (issue35-damaged/a): its secret came back empty from the store"),
                      doctor.out)
        XCTAssertTrue(doctor.out.contains("add each again (keygate add -U -s SERVICE -a ACCOUNT), which replaces it"), doctor.out)
    }
}
