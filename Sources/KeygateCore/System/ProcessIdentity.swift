// Who this process is to the kernel: its real and effective user and group ids and its
// process ids (getuid(2), geteuid(2), getgid(2), getegid(2), getpid(2), getppid(2), getsid(2)). Never
// $USER or anything else a caller could set. Acting as another user is UserIdentity's.
internal import Glibc

package enum ProcessIdentity {
    /// The real user id: who started the process (getuid).
    package static var uid: UInt32 { getuid() }
    /// The effective user id: whose rights the process has now (geteuid; 0 in a setuid-root program).
    package static var euid: UInt32 { geteuid() }
    /// The real group id (getgid).
    package static var gid: UInt32 { getgid() }
    /// The effective group id (getegid).
    package static var egid: UInt32 { getegid() }
    /// This process's id (getpid).
    package static var pid: Int32 { getpid() }
    /// The parent's process id (getppid; 1 or a subreaper once the parent has gone).
    package static var ppid: Int32 { getppid() }
    /// This process's session id (getsid(0): the session leader's process id).
    package static var sid: Int32 { getsid(0) }
}
