// SafeFile and ConfigFile, the one way Keygate touches files, on real files in a
// temporary folder: links refused, a FIFO that does not hang, owner and mode rules,
// an atomic replace that leaves the old file or the new one (never a part, never a
// temporary file), and EINTR retried (a real signal interrupting a real read).
import Foundation
import Glibc
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class SafeFileTests: XCTestCase {
    private func folder() throws -> String { try makeTemporaryFolder(self) }

    private func write(_ text: String, to path: String, mode: mode_t = 0o644) throws {
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)), path)
        XCTAssertEqual(chmod(path, mode), 0)
    }

    private func contents(_ path: String) -> String? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
    }

    private func leftovers(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".tmp") }
    }

    // MARK: - Opening

    func test_openForReading_refusesASymbolicLink_unlessToldToFollow() throws {
        let dir = try folder()
        try write("real", to: dir + "/real")
        XCTAssertEqual(symlink(dir + "/real", dir + "/link"), 0)
        guard case .failure(let refused) = SafeFile.openForReading(dir + "/link") else {
            return XCTFail("a link was opened")
        }
        XCTAssertEqual(refused.code, ELOOP)
        guard case .success(let file) = SafeFile.openForReading(dir + "/link", links: .follow) else {
            return XCTFail("a link to follow was refused")
        }
        defer { file.close() }
        XCTAssertTrue(file.isRegular)
        XCTAssertEqual(try file.readAll(limit: 100).get(), Array("real".utf8))
    }

    func test_openForReading_aFIFO_doesNotHang_andIsNotRead() throws {
        let path = try folder() + "/fifo"
        XCTAssertEqual(mkfifo(path, 0o644), 0)
        guard case .success(let file) = ConfigFile.open(path, links: .refuse) else { return XCTFail("open failed") }
        defer { file.close() }
        XCTAssertFalse(file.isRegular)
        XCTAssertEqual(ConfigFile.contents(of: file, limit: 100), .failure(.notRegular))
    }

    func test_opensAddCloseOnExec() throws {
        let path = try folder() + "/f"
        try write("x", to: path)
        let fd = SafeFile.openDescriptor(path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        XCTAssertNotEqual(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0)
    }

    // MARK: - The configuration rule

    func test_configRule_wrongOwner_andGroupOrOtherWritable_areRefused() throws {
        let path = try folder() + "/keygate.conf"
        try write("store = embedded\n", to: path, mode: 0o644)
        func problem(_ owner: ConfigFile.Owner) throws -> ConfigFile.Problem? {
            guard case .success(let file) = ConfigFile.open(path, links: .refuse) else { throw XCTSkip("cannot open") }
            defer { file.close() }
            return ConfigFile.problem(file.status, owner: owner)
        }
        let me = getuid()
        if me == 0 {
            XCTAssertNil(try problem(.root))
            XCTAssertEqual(chown(path, 4321, 4321), 0)
            XCTAssertEqual(try problem(.root), .owner(4321))
            XCTAssertNil(try problem(.rootOr(uid: 4321)), "a user's own file may be theirs")
            XCTAssertEqual(try problem(.rootOr(uid: 1234)), .owner(4321))
        } else {
            XCTAssertEqual(try problem(.root), .owner(me))
            XCTAssertNil(try problem(.rootOr(uid: me)))
        }
        let owner: ConfigFile.Owner = .rootOr(uid: me == 0 ? 4321 : me)
        XCTAssertEqual(chmod(path, 0o664), 0)
        XCTAssertEqual(try problem(owner), .writable(byOthers: false))
        XCTAssertEqual(chmod(path, 0o646), 0)
        XCTAssertEqual(try problem(owner), .writable(byOthers: true))
        XCTAssertEqual(chmod(path, 0o600), 0)
        XCTAssertNil(try problem(owner))
    }

    func test_systemKeygateConf_throughALink_orNotRoots_isRefusedWithAdvice() throws {
        let dir = try folder()
        try write("store = embedded\n", to: dir + "/real.conf")
        XCTAssertEqual(symlink(dir + "/real.conf", dir + "/keygate.conf"), 0)
        XCTAssertThrowsError(try StoreConfig.read(dir + "/keygate.conf", requireRootOwned: true)) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .param)
            XCTAssertTrue("\(error)".contains("must be a regular file (not a link) owned by root"), "\(error)")
        }
        // The user's own file may be a link.
        XCTAssertEqual(try StoreConfig.read(dir + "/keygate.conf", requireRootOwned: false), .fixed(.embedded))
        XCTAssertEqual(chmod(dir + "/real.conf", 0o666), 0)
        XCTAssertThrowsError(try StoreConfig.read(dir + "/real.conf", requireRootOwned: true)) { error in
            XCTAssertTrue("\(error)".contains("chmod 644"), "\(error)")
        }
        try write(String(repeating: "#", count: 70_000), to: dir + "/big.conf")
        XCTAssertThrowsError(try StoreConfig.read(dir + "/big.conf", requireRootOwned: false)) { error in
            XCTAssertTrue("\(error)".contains("is larger than 65536 bytes"), "\(error)")
        }
        XCTAssertNil(try StoreConfig.read(dir + "/absent.conf", requireRootOwned: true))
    }

    // MARK: - Reading and writing

    func test_readAll_stopsOnceOverTheLimit() throws {
        let path = try folder() + "/f"
        try write(String(repeating: "a", count: 10_000), to: path)
        let fd = SafeFile.openDescriptor(path, O_RDONLY)
        defer { close(fd) }
        let bytes = try SafeFile.readAll(fd, limit: 5000, chunk: 4096).get()
        XCTAssertGreaterThan(bytes.count, 5000)
        XCTAssertLessThan(bytes.count, 10_000, "reading stopped before the end")
    }

    // MARK: - Atomic replace

    func test_replace_writesTheModeAskedWhateverTheUmask_andLeavesNoTemporaryFile() throws {
        let dir = try folder()
        let path = dir + "/key"
        let old = umask(0o077)
        defer { umask(old) }
        try SafeFile.replace(path, with: Array("one".utf8), mode: 0o640)
        try SafeFile.replace(path, with: Array("two".utf8), mode: 0o640)
        XCTAssertEqual(contents(path), "two")
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o640)
        XCTAssertEqual(try leftovers(dir), [])
    }

    func test_replace_thatFailsWhileWriting_leavesTheOldFile_andNoTemporaryFile() throws {
        let dir = try folder()
        let path = dir + "/key"
        try SafeFile.replace(path, with: Array("old".utf8), mode: 0o600)
        // A file size limit makes the write fail part-way (EFBIG; SIGXFSZ ignored for the test).
        let previousHandler = signal(SIGXFSZ, SIG_IGN)
        var previous = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_FSIZE.rawValue), &previous), 0)
        var small = previous
        small.rlim_cur = 1024
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &small), 0)
        var thrown: SafeFile.ReplaceFailure?
        do {
            try SafeFile.replace(path, with: [UInt8](repeating: 0x41, count: 64 * 1024), mode: 0o600)
        } catch {
            thrown = error
        }
        XCTAssertEqual(setrlimit(Int32(RLIMIT_FSIZE.rawValue), &previous), 0)
        signal(SIGXFSZ, previousHandler)
        XCTAssertEqual(thrown?.code, EFBIG)
        XCTAssertEqual(thrown?.action, "write")
        XCTAssertEqual(contents(path), "old", "the old file is whole")
        XCTAssertEqual(try leftovers(dir), [])
    }

    func test_replace_exclusive_neverReplaces_andAtomicFileSaysDuplicate() throws {
        let dir = try folder()
        let path = dir + "/key"
        try SafeFile.replace(path, with: Array("first".utf8), mode: 0o600, exclusive: true)
        XCTAssertThrowsError(try SafeFile.replace(path, with: Array("second".utf8), mode: 0o600, exclusive: true)) { error in
            XCTAssertEqual((error as? SafeFile.ReplaceFailure)?.code, EEXIST)
        }
        XCTAssertThrowsError(try AtomicFile.create(Array("third".utf8), at: path, mode: 0o600)) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .duplicateItem)
        }
        XCTAssertEqual(contents(path), "first")
        XCTAssertEqual(try leftovers(dir), [])
    }

    func test_replace_throughALinkedFolder_isRefused() throws {
        let dir = try folder()
        XCTAssertEqual(mkdir(dir + "/real", 0o700), 0)
        XCTAssertEqual(symlink(dir + "/real", dir + "/link"), 0)
        XCTAssertThrowsError(try SafeFile.replace(dir + "/link/key", with: [1], mode: 0o600)) { error in
            XCTAssertEqual((error as? SafeFile.ReplaceFailure)?.action, "open folder")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir + "/real"), [])
    }

    // MARK: - EINTR

    func test_retryingOnEINTR_retriesOnlyEINTR() {
        var calls = 0
        let result: Int = SafeFile.retryingOnEINTR {
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 7
        }
        XCTAssertEqual(result, 7)
        XCTAssertEqual(calls, 3)
        calls = 0
        let failed: Int = SafeFile.retryingOnEINTR {
            calls += 1
            errno = EIO
            return -1
        }
        XCTAssertEqual(failed, -1)
        XCTAssertEqual(errno, EIO)
        XCTAssertEqual(calls, 1)
    }

    func test_aReadInterruptedByARealSignal_isRetried() throws {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        defer { close(ends[0]); close(ends[1]) }
        // A handler without SA_RESTART: the blocked read fails with EINTR when SIGUSR2 arrives.
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        XCTAssertEqual(sigaction(SIGUSR2, &action, &previous), 0)
        defer { sigaction(SIGUSR2, &previous, nil) }

        let reader = pthread_self()
        let writer = ends[1]
        let helper = Thread {
            usleep(150_000)
            pthread_kill(reader, SIGUSR2)
            usleep(150_000)
            _ = Glibc.write(writer, "ok", 2)
        }
        helper.start()
        var buffer = [UInt8](repeating: 0, count: 2)
        var calls = 0
        var interrupted = 0
        let n = SafeFile.retryingOnEINTR {
            calls += 1
            let got = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
            if got < 0, errno == EINTR { interrupted += 1 }
            return got
        }
        XCTAssertEqual(n, 2)
        XCTAssertEqual(buffer, Array("ok".utf8))
        XCTAssertEqual(interrupted, 1, "the signal interrupted the read once")
        XCTAssertEqual(calls, 2, "and the read was made again")
    }
}
