// Apple's CFError functions over the CFError alias (an NSError): domain, code, user info,
// description and failure reason, CFErrorCreate, and the standard domain constants, so a
// wrapper that turns the `Unmanaged<CFError>` of SecAccessControlCreateWithFlags into its
// own error type compiles unchanged. Delegates everything to Foundation's NSError.

/// Apple's `CFErrorDomain`: a CFString naming an error domain.
public typealias CFErrorDomain = CFString

/// Apple's standard domains. The Cocoa and OSStatus ones are Foundation's own strings, so
/// an NSError made here and one made by Foundation agree.
public let kCFErrorDomainPOSIX: CFErrorDomain! = NSPOSIXErrorDomain
public let kCFErrorDomainOSStatus: CFErrorDomain! = NSOSStatusErrorDomain
public let kCFErrorDomainMach: CFErrorDomain! = NSMachErrorDomain
public let kCFErrorDomainCocoa: CFErrorDomain! = NSCocoaErrorDomain

/// Apple's user-info keys, with the same strings as Foundation's NS… keys.
public let kCFErrorLocalizedDescriptionKey: CFString! = NSLocalizedDescriptionKey
public let kCFErrorLocalizedFailureReasonKey: CFString! = NSLocalizedFailureReasonErrorKey
public let kCFErrorLocalizedRecoverySuggestionKey: CFString! = NSLocalizedRecoverySuggestionErrorKey
public let kCFErrorDescriptionKey: CFString! = "NSDescription"
public let kCFErrorUnderlyingErrorKey: CFString! = NSUnderlyingErrorKey

/// Apple's `CFErrorCreate`. A nil domain gives nil, as Apple's precondition is a domain.
public func CFErrorCreate(_ allocator: CFAllocator!, _ domain: CFErrorDomain!, _ code: CFIndex,
                          _ userInfo: CFDictionary!) -> CFError! {
    guard let domain else { return nil }
    return NSError(domain: domain, code: code, userInfo: userInfo)
}

/// Apple's `CFErrorGetDomain`.
public func CFErrorGetDomain(_ err: CFError!) -> CFErrorDomain! {
    err?.domain
}

/// Apple's `CFErrorGetCode`.
public func CFErrorGetCode(_ err: CFError!) -> CFIndex {
    err?.code ?? 0
}

/// Apple's `CFErrorCopyUserInfo`: never nil for an error (an empty dictionary when it has none).
public func CFErrorCopyUserInfo(_ err: CFError!) -> CFDictionary! {
    guard let err else { return nil }
    return err.userInfo
}

/// Apple's `CFErrorCopyDescription`: the localized description (the user-info one when
/// given, else Foundation's "The operation could not be completed" sentence).
public func CFErrorCopyDescription(_ err: CFError!) -> CFString! {
    err?.localizedDescription
}

/// Apple's `CFErrorCopyFailureReason`: the user info's failure reason, or nil.
public func CFErrorCopyFailureReason(_ err: CFError!) -> CFString! {
    err?.userInfo[NSLocalizedFailureReasonErrorKey] as? String
}

/// Apple's `CFErrorCopyRecoverySuggestion`: the user info's recovery suggestion, or nil.
public func CFErrorCopyRecoverySuggestion(_ err: CFError!) -> CFString! {
    err?.userInfo[NSLocalizedRecoverySuggestionErrorKey] as? String
}
