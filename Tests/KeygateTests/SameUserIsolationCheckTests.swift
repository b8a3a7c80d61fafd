// doctor's same-user-isolation check for every state of the two sysctls it reads.
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class SameUserIsolationCheckTests: XCTestCase {
    func test_ok_onlyWhenPtraceIsLimited_andTIOCSTIIsOff() {
        for scope in ["1\n", "2\n", "3\n"] {
            XCTAssertEqual(SameUserIsolationCheck.evaluate(ptraceScope: scope, legacyTIOCSTI: "0\n").level, .ok, scope)
        }
    }

    func test_warns_forPtraceScopeZero_orNoYama_withTheSysctlToSet() {
        for scope in ["0\n", nil] {
            let result = SameUserIsolationCheck.evaluate(ptraceScope: scope, legacyTIOCSTI: "0\n")
            XCTAssertEqual(result.level, .warn)
            XCTAssertTrue(result.detail.contains("ptrace your shell"), result.detail)
            XCTAssertTrue(result.advice.contains("kernel.yama.ptrace_scope=1"), result.advice)
            XCTAssertFalse(result.detail.contains("TIOCSTI"), result.detail)
        }
    }

    func test_warns_forLegacyTIOCSTI_orAKernelWithoutTheSwitch() {
        let on = SameUserIsolationCheck.evaluate(ptraceScope: "1", legacyTIOCSTI: "1\n")
        XCTAssertEqual(on.level, .warn)
        XCTAssertTrue(on.advice.contains("sysctl -w dev.tty.legacy_tiocsti=0"), on.advice)
        let old = SameUserIsolationCheck.evaluate(ptraceScope: "1", legacyTIOCSTI: nil)
        XCTAssertEqual(old.level, .warn)
        XCTAssertTrue(old.detail.contains("older than 6.2"), old.detail)
    }

    func test_bothProblems_areNamed_inOneWarning() {
        let result = SameUserIsolationCheck.evaluate(ptraceScope: "0", legacyTIOCSTI: "1")
        XCTAssertEqual(result.level, .warn)
        XCTAssertTrue(result.detail.contains("ptrace") && result.detail.contains("TIOCSTI"), result.detail)
    }
}
