// Keygate is the product users import, and its public API speaks in the lower
// targets' types (ItemQuery, AccessControl, KeychainError, Prompter...): re-exported,
// `import Keygate` gives them all: an app imports one module.
// docs/ARCHITECTURE.md draws the targets; docs/DECISIONS.md says why.
@_exported import KeygateCore
@_exported import KeygateStorage
@_exported import KeygateAuthentication
