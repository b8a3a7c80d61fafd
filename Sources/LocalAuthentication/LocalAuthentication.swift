// LocalAuthentication: the module name Apple's code imports for LAContext, LAPolicy and
// LAError (`import LocalAuthentication`). Those live in KeygateSecurity, as the Security
// surface they work with does; this module re-exports it under Apple's name. Nothing is
// declared here (docs/SECURITY_COMPAT.md, "Importing").
@_exported import KeygateSecurity
