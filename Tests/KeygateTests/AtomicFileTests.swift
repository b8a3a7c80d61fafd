// Atomic files: whole-file replacement, no temporary files left behind, and reads that
// refuse links, special files and oversize files.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class AtomicFileTests: XCTestCase {
    private func entries(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0)
        return info.st_mode & 0o777
    }

    func test_write_createsTheFileWithItsMode_andLeavesNoTemporaryFiles() throws {
        let folder = try makeTemporaryFolder(self)
        let path = folder + "/file.json"
        let oldMask = umask(0o077)  // the mode must not depend on umask
        defer { umask(oldMask) }
        try AtomicFile.write(Array("one".utf8), to: path, mode: 0o640)
        XCTAssertEqual(try AtomicFile.read(path, maxBytes: 100), Array("one".utf8))
        XCTAssertEqual(mode(path), 0o640)
        XCTAssertEqual(try entries(folder), ["file.json"])
    }

    func test_write_replacesTheFileAsAWhole_soOpenReadersKeepTheOldContent() throws {
        let folder = try makeTemporaryFolder(self)
        let path = folder + "/file.json"
        try AtomicFile.write(Array("old content".utf8), to: path, mode: 0o600)
        let reader = try XCTUnwrap(FileHandle(forReadingAtPath: path))
        defer { try? reader.close() }
        try AtomicFile.write(Array("new".utf8), to: path, mode: 0o600)
        // A rename swaps the inode: a truncate-and-write would show the reader "new".
        XCTAssertEqual(String(decoding: reader.readDataToEndOfFile(), as: UTF8.self), "old content")
        XCTAssertEqual(try AtomicFile.read(path, maxBytes: 100), Array("new".utf8))
        XCTAssertEqual(try entries(folder), ["file.json"])
    }

    func test_create_throwsDuplicate_whenTheFileExists_andKeepsItsContent() throws {
        let folder = try makeTemporaryFolder(self)
        let path = folder + "/file.json"
        try AtomicFile.create(Array("first".utf8), at: path, mode: 0o600)
        assertThrowsKeychainError(.duplicateItem) { try AtomicFile.create(Array("second".utf8), at: path, mode: 0o600) }
        XCTAssertEqual(try AtomicFile.read(path, maxBytes: 100), Array("first".utf8))
        XCTAssertEqual(try entries(folder), ["file.json"])
    }

    func test_write_failsCleanly_whenTheFolderIsMissing() throws {
        let folder = try makeTemporaryFolder(self)
        assertThrowsKeychainError(.notAvailable) { try AtomicFile.write([1], to: folder + "/missing/file", mode: 0o600) }
        XCTAssertEqual(try entries(folder), [])
    }

    func test_read_returnsNil_whenTheFileIsAbsent() throws {
        XCTAssertNil(try AtomicFile.read(try makeTemporaryFolder(self) + "/absent", maxBytes: 10))
    }

    func test_read_refusesSymbolicLinks() throws {
        let folder = try makeTemporaryFolder(self)
        try AtomicFile.write([1, 2], to: folder + "/real", mode: 0o600)
        XCTAssertEqual(symlink(folder + "/real", folder + "/link"), 0)
        let error = assertThrowsKeychainError(.notAvailable) { try AtomicFile.read(folder + "/link", maxBytes: 10) }
        XCTAssertTrue(error?.message.contains("symbolic link") ?? false, error?.message ?? "")
    }

    func test_read_refusesOversizeFiles() throws {
        let folder = try makeTemporaryFolder(self)
        try AtomicFile.write(Array(repeating: 65, count: 11), to: folder + "/big", mode: 0o600)
        XCTAssertEqual(try AtomicFile.read(folder + "/big", maxBytes: 11)?.count, 11)
        let error = assertThrowsKeychainError(.decode) { try AtomicFile.read(folder + "/big", maxBytes: 10) }
        XCTAssertTrue(error?.message.contains(folder + "/big") ?? false, error?.message ?? "")
    }

    func test_read_refusesAFifoWithoutHanging() throws {
        let folder = try makeTemporaryFolder(self)
        XCTAssertEqual(mkfifo(folder + "/fifo", 0o600), 0)
        assertThrowsKeychainError(.notAvailable) { try AtomicFile.read(folder + "/fifo", maxBytes: 10) }
    }
}
