// Apple's SecCopyErrorMessageString: the text for an OSStatus. Apple's sentences for the
// codes Keychain code meets, then, when the last failing SecItem call on this process
// returned that same status, Keygate's advice (what happened and what to do), which Apple
// code usually logs. Delegates the advice bookkeeping to SecLastFailure.

private let appleMessages: [OSStatus: String] = [
    errSecSuccess: "No error.",
    errSecUnimplemented: "Function or operation not implemented.",
    errSecIO: "I/O error.",
    errSecParam: "One or more parameters passed to a function were not valid.",
    errSecAllocate: "Failed to allocate memory.",
    errSecUserCanceled: "User canceled the operation.",
    errSecBadReq: "Bad parameter or invalid state for operation.",
    errSecInternalComponent: "An internal component failed.",
    errSecMissingEntitlement: "A required entitlement isn't present.",
    errSecNotAvailable: "No keychain is available. You may need to restart your computer.",
    errSecReadOnly: "This keychain cannot be modified.",
    errSecAuthFailed: "The user name or passphrase you entered is not correct.",
    errSecNoSuchKeychain: "The specified keychain could not be found.",
    errSecDuplicateItem: "The specified item already exists in the keychain.",
    errSecItemNotFound: "The specified item could not be found in the keychain.",
    errSecNoSuchAttr: "The specified attribute does not exist.",
    errSecNoSuchClass: "The specified item does not appear to be a valid keychain item.",
    errSecInteractionNotAllowed: "User interaction is not allowed.",
    errSecReadOnlyAttr: "The specified attribute could not be modified.",
    errSecInteractionRequired: "User interaction is required, but is currently not allowed.",
    errSecDataNotAvailable: "The contents of this item cannot be retrieved.",
    errSecDataNotModifiable: "The contents of this item cannot be modified.",
    errSecDecode: "Unable to decode the provided data.",
    errSecInvalidEncoding: "The encoding is not valid.",
]

/// The message for `status` (Apple's wording), with Keygate's advice for the last failure
/// of that status in this process. `reserved` must be nil, as on Apple.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    let base = appleMessages[status] ?? "OSStatus \(status)"
    guard status != errSecSuccess, let advice = SecLastFailure.advice(for: status) else { return base }
    return base + " (Keygate: " + advice + ")"
}
