// pam_keygate.so, the thin module (docs/DECISIONS.md, "pam_keygate in real logins"): Embedded Swift, no Foundation, no runtime
// beyond what the compiler embeds (about 40 KB in all). A session's open and close are
// counted here (SessionFile), and the last close locks here (SessionUser), so a login starts
// the helper at auth only, and at open when the keychain is still locked (auth's unlock in the
// same transaction is remembered on the handle: UnlockedAtAuth). For those and for
// chauthtok it starts keygate-pam-helper (the KDF, the unwrap, the kernel keyring, the lock
// and the count when the module cannot do them: the Keygate library, in a process of its own, as pam_unix starts unix_chkpwd and
// pam_gnome_keyring starts gnome-keyring-daemon), writes the request on a pipe (the
// phase, the PAM items, the options and the typed passwords, straight from libpam's
// memory: never argv or the environment), relays the log and info lines the helper
// prints to pam_syslog and pam_info, and waits at most `budgetMilliseconds`, then kills
// it. Every function returns PAM_IGNORE: Keygate never decides a login.
internal import CPAMModule

/// The longest the module waits for the helper, which keeps tighter deadlines itself
/// (2 s beyond root's calibrated Argon2id time); this is the backstop.
let budgetMilliseconds: Int64 = 10_000
/// A request is a few short lines; PAM refuses passwords longer than 512 bytes.
let maxPasswordBytes = 4096
let maxFieldBytes = 1024
let maxOutputBytes = 256 * 1024

@_cdecl("pam_sm_authenticate")
public func pam_sm_authenticate(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                                _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    callHelper(pamh, "auth", flags, argc, argv, secrets: [PAM_AUTHTOK], rememberUnlock: true)
}

/// Keygate holds no credentials of its own to set.
@_cdecl("pam_sm_setcred")
public func pam_sm_setcred(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                           _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    PAM_IGNORE
}

/// Counts the session here (SessionFile) and starts the helper only when the keychain is
/// locked (its "unlock" phase: the host protector, or the line that says why it stays
/// locked). Anything the module cannot do itself goes to the helper's "open" phase, which
/// counts and logs as it always did.
@_cdecl("pam_sm_open_session")
public func pam_sm_open_session(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                                _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let pamh else { return PAM_IGNORE }
    switch SessionStep.take(pamh, "open", flags, argc, argv, { $0.open() }) {
    case .answered(let code): return code
    case .counted(let user, let options, let count):
        if UnlockedAtAuth.take(uid: user.uid, pamh) {
            if options.debug {
                user.log(pamh, "session opened for ", ": ", Int64(count), " open; the keychain was unlocked at auth")
            }
            return PAM_IGNORE
        }
        guard user.isUnlocked() == KEYGATE_USER_KEYS_FOUND else {
            return callHelper(pamh, "unlock", flags, argc, argv, secrets: [])
        }
        if options.debug {
            user.log(pamh, "session opened for ", ": ", Int64(count), " open; the keychain is unlocked")
        }
        return PAM_IGNORE
    }
}

/// Uncounts the session here, and at the user's last session locks the keychain here too
/// (SessionUser.lockWithoutTheHelper: a child as the user drops the keys, and the line goes to
/// syslog and root's audit record). Where the module cannot lock, the helper's "lock" phase
/// does it; where it cannot count, the helper's "close" phase does all of it, as it always did.
@_cdecl("pam_sm_close_session")
public func pam_sm_close_session(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                                 _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let pamh else { return PAM_IGNORE }
    switch SessionStep.take(pamh, "close", flags, argc, argv, { $0.close() }) {
    case .answered(let code): return code
    case .counted(let user, let options, let remaining):
        guard remaining == 0 else {
            if options.debug {
                user.log(pamh, "session closed for ", ": ", Int64(remaining), " still open, the keychain stays unlocked")
            }
            return PAM_IGNORE
        }
        guard !options.unlockOnly else {
            if options.debug { user.log(pamh, "last session of ", " closed; unlock_only: the keychain locks at its timeout") }
            return PAM_IGNORE
        }
        if user.lockWithoutTheHelper(pamh, options) { return PAM_IGNORE }
        return callHelper(pamh, "lock", flags, argc, argv, secrets: [])
    }
}

/// Only the update phase re-wraps; the preliminary check has nothing to do.
@_cdecl("pam_sm_chauthtok")
public func pam_sm_chauthtok(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32,
                             _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard flags & PAM_UPDATE_AUTHTOK != 0 else { return PAM_IGNORE }
    return callHelper(pamh, "passwd", flags, argc, argv, secrets: [PAM_AUTHTOK, PAM_OLDAUTHTOK])
}

/// One request to the helper and its answer; always PAM_IGNORE.
func callHelper(_ pamh: OpaquePointer?, _ phase: StaticString, _ flags: Int32, _ argc: Int32,
                _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?, secrets: [Int32], rememberUnlock: Bool = false) -> Int32 {
    guard let pamh else { return PAM_IGNORE }
    guard let user = item(pamh, PAM_USER), let userLength = fieldLength(user), userLength > 0 else {
        return PAM_IGNORE  // no user: nothing to do, and no process started for it
    }
    var request = Bytes()
    request.append("keygate-pam 1\nphase ")
    request.append(phase)
    request.append("\nflags ")
    request.append(number: Int64(flags))
    request.append("\nuser ")
    request.append(user, userLength)
    request.append("\nservice ")
    if let service = item(pamh, PAM_SERVICE), let length = fieldLength(service) { request.append(service, length) }
    request.append("\ntty ")
    if let tty = item(pamh, PAM_TTY), let length = fieldLength(tty) { request.append(tty, length) }
    request.append("\n")
    guard var helper = keygate_pam_helper_path() else { return PAM_IGNORE }
    if let argv, argc > 0 {
        for index in 0..<Int(argc) {
            guard let argument = argv[index], let length = fieldLength(argument) else { continue }
            if strncmp(argument, "helper=", 7) == 0 { helper = argument + 7 }
            request.append("arg ")
            request.append(argument, length)
            request.append("\n")
        }
    }
    let lines = run(helper, request, pamh, secrets)
    relay(lines, pamh)
    if rememberUnlock { UnlockedAtAuth.remember(lines, pamh) }
    return PAM_IGNORE
}

/// Starts the helper, writes the request and the secrets, reads its output until it ends
/// or the budget runs out (then kills it), and returns that output. SIGCHLD is the default
/// and SIGPIPE ignored while the helper runs (as pam_unix does around unix_chkpwd), so that
/// the application's handlers neither reap the helper first nor die of a closed pipe.
func run(_ helper: UnsafePointer<CChar>, _ request: Bytes, _ pamh: OpaquePointer, _ secrets: [Int32]) -> Bytes {
    var oldChild = sigaction()
    var oldPipe = sigaction()
    _ = keygate_set_signal(SIGCHLD, keygate_sig_dfl(), &oldChild)
    _ = keygate_set_signal(SIGPIPE, keygate_sig_ign(), &oldPipe)
    defer {
        _ = keygate_restore_signal(SIGPIPE, &oldPipe)
        _ = keygate_restore_signal(SIGCHLD, &oldChild)
    }
    var input: [Int32] = [-1, -1]
    var output: [Int32] = [-1, -1]
    let piped = pipe2(&input, O_CLOEXEC) == 0 && pipe2(&output, O_CLOEXEC) == 0
    var answer = Bytes()
    guard piped else {
        closeAll(input[0], input[1], output[0], output[1])
        answer.append("log 3 cannot make a pipe for keygate-pam-helper: the login goes on without Keygate\n")
        return answer
    }
    var pid: pid_t = 0
    let spawnError = keygate_spawn_helper(helper, input[0], output[1], &pid)
    closeAll(input[0], output[1])
    guard spawnError == 0, pid > 0 else {
        closeAll(input[1], output[0])
        if keygate_spawn_cannot_run(spawnError) != 0 {
            answer.append("log 3 cannot run keygate-pam-helper at ")
            answer.append(helper, strnlen(helper, maxFieldBytes))
            answer.append(" (not installed? reinstall keygate): the login goes on without Keygate\n")
        } else {
            answer.append("log 3 cannot start keygate-pam-helper (error ")
            answer.append(number: Int64(spawnError))
            answer.append("): the login goes on without Keygate\n")
        }
        return answer
    }
    // The request (a few hundred bytes) and the secrets fit the pipe's buffer: no write waits.
    // The secrets are written from libpam's own memory, never copied into the module's.
    _ = writeAll(input[1], request.bytes)
    for which in secrets {
        guard let secret = item(pamh, which) else { continue }
        let length = strnlen(secret, maxPasswordBytes + 1)
        guard length <= maxPasswordBytes else { continue }
        var header = Bytes()
        header.append(which == PAM_OLDAUTHTOK ? "oldauthtok " : "authtok ")
        header.append(number: Int64(length))
        header.append("\n")
        _ = writeAll(input[1], header.bytes)
        _ = writeRaw(input[1], UnsafeRawPointer(secret), length)
    }
    var end = Bytes()
    end.append("end\n")
    _ = writeAll(input[1], end.bytes)
    _ = close(input[1])

    let deadline = keygate_monotonic_ms() + budgetMilliseconds
    var timedOut = false
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let left = deadline - keygate_monotonic_ms()
        if left <= 0 { timedOut = true; break }
        var poller = pollfd(fd: output[0], events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(left))
        if ready < 0 { if keygate_errno() == EINTR { continue }; break }
        if ready == 0 { continue }
        let n = chunk.withUnsafeMutableBytes { read(output[0], $0.baseAddress, $0.count) }
        if n < 0 { if keygate_errno() == EINTR { continue }; break }
        if n == 0 { break }
        if answer.bytes.count + n <= maxOutputBytes { answer.bytes.append(contentsOf: chunk[0..<n]) }
    }
    _ = close(output[0])
    if timedOut {
        _ = kill(pid, SIGKILL)
        answer.append("log 3 keygate-pam-helper did not finish within ")
        answer.append(number: budgetMilliseconds / 1000)
        answer.append(" s: stopped it; the login goes on without Keygate\n")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && keygate_errno() == EINTR {}
    if !timedOut && keygate_exited_with(status) == 127 {
        answer.append("log 3 cannot run keygate-pam-helper at ")
        answer.append(helper, strnlen(helper, maxFieldBytes))
        answer.append(" (not installed? reinstall keygate): the login goes on without Keygate\n")
    }
    return answer
}

/// Passes the helper's lines on: "log PRIORITY TEXT" to pam_syslog, "info TEXT" to pam_info.
func relay(_ answer: Bytes, _ pamh: OpaquePointer) {
    var start = 0
    let bytes = answer.bytes
    while start < bytes.count {
        var end = start
        while end < bytes.count && bytes[end] != 0x0A { end += 1 }
        var line = Array(bytes[start..<end])
        start = end + 1
        if line.starts(with: Array("log ".utf8)) {
            var index = 4
            var priority: Int32 = 0
            while index < line.count, line[index] >= 0x30, line[index] <= 0x39, priority < 8 {
                priority = priority * 10 + Int32(line[index] - 0x30)
                index += 1
            }
            guard index < line.count, line[index] == 0x20, priority <= LOG_DEBUG else { continue }
            var text = Array(line[(index + 1)...])
            text.append(0)
            text.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { keygate_pam_syslog(pamh, priority, $0.baseAddress) }
            }
        } else if line.starts(with: Array("info ".utf8)) {
            line.removeFirst(5)
            line.append(0)
            _ = line.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { keygate_pam_info(pamh, $0.baseAddress) }
            }
        }
    }
}

/// pam_get_item(3) as a C string, or nil.
func item(_ pamh: OpaquePointer, _ type: Int32) -> UnsafePointer<CChar>? {
    var value: UnsafeRawPointer?
    guard pam_get_item(pamh, type, &value) == PAM_SUCCESS, let value else { return nil }
    return value.assumingMemoryBound(to: CChar.self)
}

/// The length of a field the request may carry on one line: nil when it is too long or
/// holds a line break (such a field is left out, never passed on garbled).
func fieldLength(_ text: UnsafePointer<CChar>) -> Int? {
    let length = strnlen(text, maxFieldBytes + 1)
    guard length <= maxFieldBytes else { return nil }
    for index in 0..<length where text[index] == 0x0A || text[index] == 0x0D { return nil }
    return length
}

func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { writeRaw(fd, $0.baseAddress, $0.count) }
}

func writeRaw(_ fd: Int32, _ pointer: UnsafeRawPointer?, _ count: Int) -> Bool {
    guard let pointer else { return count == 0 }
    var offset = 0
    while offset < count {
        let n = write(fd, pointer + offset, count - offset)
        if n < 0 && keygate_errno() == EINTR { continue }
        if n <= 0 { return false }
        offset += n
    }
    return true
}

func closeAll(_ fds: Int32...) {
    for fd in fds where fd >= 0 { _ = close(fd) }
}

/// A growing byte buffer for the request and the answer (no secrets go in it).
struct Bytes {
    var bytes: [UInt8] = []

    mutating func append(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: UnsafePointer<CChar>, _ length: Int) {
        text.withMemoryRebound(to: UInt8.self, capacity: length) { bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
    }

    mutating func append(number: Int64) {
        if number < 0 { bytes.append(0x2D) }
        var magnitude = number < 0 ? UInt64(-number) : UInt64(number)
        var digits: [UInt8] = []
        repeat {
            digits.append(UInt8(magnitude % 10) + 0x30)
            magnitude /= 10
        } while magnitude > 0
        bytes.append(contentsOf: digits.reversed())
    }

    mutating func append(unsigned number: UInt64) {
        var magnitude = number
        var digits: [UInt8] = []
        repeat {
            digits.append(UInt8(magnitude % 10) + 0x30)
            magnitude /= 10
        } while magnitude > 0
        bytes.append(contentsOf: digits.reversed())
    }
}
