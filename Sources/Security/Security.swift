// Security: the module name Apple's keychain code imports (`import Security`). It is
// KeygateSecurity under Apple's name, so sources written for Apple build here with their
// imports unchanged. Everything is KeygateSecurity's; nothing is declared here.
// docs/SECURITY_COMPAT.md ("Importing") says what reaches files that import only Foundation.
@_exported import KeygateSecurity
