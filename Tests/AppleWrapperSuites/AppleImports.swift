// The one step a port adds to each target whose files use Security's names while
// importing only Foundation or XCTest: this file. On Apple, Foundation brings the Security
// C declarations into every file; on Linux it cannot (Keygate does not own Foundation),
// and a module imported in one file reaches another file only when it is re-exported.
// docs/SECURITY_COMPAT.md ("Importing") measures the alternatives.
@_exported import LocalAuthentication
@_exported import Security
