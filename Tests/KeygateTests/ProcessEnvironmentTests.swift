@testable import KeygateCore
import Glibc
import XCTest

/// ProcessEnvironment keeps its last snapshot while the environment's bytes are the same:
/// every change between two calls must still be seen.
final class ProcessEnvironmentTests: XCTestCase {
    private let variable = "KEYGATE_PROCESS_ENVIRONMENT_TEST"

    override func tearDown() {
        unsetenv(variable)
        super.tearDown()
    }

    func test_snapshot_seesEveryChange_betweenTwoCalls() {
        unsetenv(variable)
        XCTAssertNil(ProcessEnvironment.snapshot()[variable])
        setenv(variable, "one", 1)
        XCTAssertEqual(ProcessEnvironment.snapshot()[variable], "one")
        XCTAssertEqual(ProcessEnvironment.snapshot()[variable], "one", "asked again with nothing changed")
        setenv(variable, "two", 1)
        XCTAssertEqual(ProcessEnvironment.snapshot()[variable], "two", "a value of the same length")
        setenv(variable, "", 1)
        XCTAssertEqual(ProcessEnvironment.snapshot()[variable], "")
        unsetenv(variable)
        XCTAssertNil(ProcessEnvironment.snapshot()[variable])
    }

    func test_oneVariable_isReadAsTheSnapshotReadsIt_andAPrefixIsNotAMatch() {
        unsetenv(variable)
        setenv(variable + "_LONGER", "not this", 1)
        defer { unsetenv(variable + "_LONGER") }
        XCTAssertNil(ProcessEnvironment.variable(variable), "another variable that starts with the name")
        setenv(variable, "a=b", 1)
        XCTAssertEqual(ProcessEnvironment.variable(variable), "a=b", "split at the first equals sign")
        XCTAssertEqual(ProcessEnvironment.variable(variable), ProcessEnvironment.snapshot()[variable])
        setenv(variable, "", 1)
        XCTAssertEqual(ProcessEnvironment.variable(variable), "")
    }

    func test_snapshot_isTheWholeEnvironment_splitAtTheFirstEquals() {
        setenv(variable, "a=b", 1)
        let snapshot = ProcessEnvironment.snapshot()
        XCTAssertEqual(snapshot[variable], "a=b")
        XCTAssertEqual(snapshot["PATH"], getenv("PATH").map { String(cString: $0) })
        var names = Set<String>()
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") { names.insert(String(text[..<eq])) }
            p += 1
        }
        XCTAssertEqual(Set(snapshot.keys), names)
    }
}
