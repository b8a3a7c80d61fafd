// KeygateSecurity: Apple's Security and LocalAuthentication surface (SecItem*, kSec*,
// OSStatus/errSec*, SecAccessControl, LAContext) over Keygate, so that Keychain code
// written for Apple compiles and behaves the same on Linux after only its imports change.
//
// Apple's headers bring Foundation with them; so does this module, so that `Data`,
// `NSError` and `TimeInterval` resolve in files that imported only Security.
// Everything here delegates to Keygate's KeychainOperations and AuthenticationContext;
// docs/SECURITY_COMPAT.md lists the surface and every known difference from Apple.
@_exported import Foundation
