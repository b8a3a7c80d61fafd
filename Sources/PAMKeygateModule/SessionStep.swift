// The first step a session's open and close share: find the user, change the module's own
// count (SessionFile), and hand the phase to the helper where the module cannot do either, so
// that open and close cannot drift apart in when the helper is started. What the count means
// (unlock at open, lock at the last close) stays with each PAM function in Module.swift.
internal import CPAMModule

enum SessionStep {
    /// The PAM function answers this now: an ignored user, or the helper ran the phase.
    case answered(Int32)
    /// The module counted the session itself: the user, the options, the count after the change.
    case counted(SessionUser, SessionOptions, Int)

    /// Finds the user and applies `change` to the user's SessionFile (nil: it failed); where the
    /// user is unknown or the count fails, the helper's `phase` does all of it.
    static func take(_ pamh: OpaquePointer, _ phase: StaticString, _ flags: Int32, _ argc: Int32,
                     _ argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                     _ change: (SessionFile) -> Int?) -> SessionStep {
        let options = SessionOptions(argc, argv)
        switch SessionUser.find(pamh, options) {
        case .ignored: return .answered(PAM_IGNORE)
        case .unknown: return .answered(callHelper(pamh, phase, flags, argc, argv, secrets: []))
        case .found(let user):
            guard let count = change(SessionFile(uid: user.uid)) else {
                return .answered(callHelper(pamh, phase, flags, argc, argv, secrets: []))
            }
            return .counted(user, options, count)
        }
    }
}
