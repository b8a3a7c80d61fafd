// The functions libpam looks up in pam_keygate.so, exported with their C names.
// exports.map keeps them the only exported symbols. Each is total: ModuleCall.run
// turns every error into a log line and PAM_IGNORE.
internal import CPAM

public typealias PAMArguments = UnsafeMutablePointer<UnsafePointer<CChar>?>

@_cdecl("pam_sm_authenticate")
public func pam_sm_authenticate(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: PAMArguments?) -> Int32 {
    ModuleCall.run(pamh, flags, argc, argv, Authenticate.run)
}

/// Keygate holds no credentials of its own to set.
@_cdecl("pam_sm_setcred")
public func pam_sm_setcred(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: PAMArguments?) -> Int32 {
    PAM_IGNORE
}

@_cdecl("pam_sm_open_session")
public func pam_sm_open_session(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: PAMArguments?) -> Int32 {
    ModuleCall.run(pamh, flags, argc, argv, OpenSession.run)
}

@_cdecl("pam_sm_close_session")
public func pam_sm_close_session(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: PAMArguments?) -> Int32 {
    ModuleCall.run(pamh, flags, argc, argv, CloseSession.run)
}

@_cdecl("pam_sm_chauthtok")
public func pam_sm_chauthtok(_ pamh: OpaquePointer?, _ flags: Int32, _ argc: Int32, _ argv: PAMArguments?) -> Int32 {
    ModuleCall.run(pamh, flags, argc, argv, ChangePassword.run)
}
