// The kSec* keys and values of Apple's SecItem API, with Apple's own string values
// ("svce", "acct", "genp", ...), so that dictionaries built by Apple code, and the keys
// it reads from results (`item[kSecAttrAccount as String]`), mean the same here.
// SecItemQuery.swift reads them; nothing here delegates.

// MARK: Item classes
public let kSecClass: CFString = "class"
public let kSecClassGenericPassword: CFString = "genp"
public let kSecClassInternetPassword: CFString = "inet"
/// Declared for code that names them; Keygate stores passwords only (errSecUnimplemented).
public let kSecClassCertificate: CFString = "cert"
public let kSecClassKey: CFString = "keys"
public let kSecClassIdentity: CFString = "idnt"

// MARK: Attributes
public let kSecAttrAccessible: CFString = "pdmn"
public let kSecAttrAccessControl: CFString = "accc"
public let kSecAttrAccessGroup: CFString = "agrp"
public let kSecAttrSynchronizable: CFString = "sync"
public let kSecAttrSynchronizableAny: CFString = "syna"
public let kSecAttrCreationDate: CFString = "cdat"
public let kSecAttrModificationDate: CFString = "mdat"
public let kSecAttrDescription: CFString = "desc"
public let kSecAttrComment: CFString = "icmt"
public let kSecAttrCreator: CFString = "crtr"
public let kSecAttrType: CFString = "type"
public let kSecAttrLabel: CFString = "labl"
public let kSecAttrIsInvisible: CFString = "invi"
public let kSecAttrIsNegative: CFString = "nega"
public let kSecAttrAccount: CFString = "acct"
public let kSecAttrService: CFString = "svce"
public let kSecAttrGeneric: CFString = "gena"
public let kSecAttrSecurityDomain: CFString = "sdmn"
public let kSecAttrServer: CFString = "srvr"
public let kSecAttrProtocol: CFString = "ptcl"
public let kSecAttrAuthenticationType: CFString = "atyp"
public let kSecAttrPort: CFString = "port"
public let kSecAttrPath: CFString = "path"

// MARK: kSecAttrAccessible values
public let kSecAttrAccessibleWhenUnlocked: CFString = "ak"
public let kSecAttrAccessibleAfterFirstUnlock: CFString = "ck"
/// Deprecated by Apple; stored here as after-first-unlock (the nearest class Keygate has).
public let kSecAttrAccessibleAlways: CFString = "dk"
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString = "akpu"
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString = "aku"
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"
/// Deprecated by Apple; stored here as after-first-unlock-this-device-only.
public let kSecAttrAccessibleAlwaysThisDeviceOnly: CFString = "dku"

// MARK: kSecAttrProtocol values (Apple's four-character codes)
public let kSecAttrProtocolFTP: CFString = "ftp "
public let kSecAttrProtocolFTPAccount: CFString = "ftpa"
public let kSecAttrProtocolHTTP: CFString = "http"
public let kSecAttrProtocolIRC: CFString = "irc "
public let kSecAttrProtocolNNTP: CFString = "nntp"
public let kSecAttrProtocolPOP3: CFString = "pop3"
public let kSecAttrProtocolSMTP: CFString = "smtp"
public let kSecAttrProtocolSOCKS: CFString = "sox "
public let kSecAttrProtocolIMAP: CFString = "imap"
public let kSecAttrProtocolLDAP: CFString = "ldap"
public let kSecAttrProtocolAppleTalk: CFString = "atlk"
public let kSecAttrProtocolAFP: CFString = "afp "
public let kSecAttrProtocolTelnet: CFString = "teln"
public let kSecAttrProtocolSSH: CFString = "ssh "
public let kSecAttrProtocolFTPS: CFString = "ftps"
public let kSecAttrProtocolHTTPS: CFString = "htps"
public let kSecAttrProtocolHTTPProxy: CFString = "htpx"
public let kSecAttrProtocolHTTPSProxy: CFString = "htsx"
public let kSecAttrProtocolFTPProxy: CFString = "ftpx"
public let kSecAttrProtocolSMB: CFString = "smb "
public let kSecAttrProtocolRTSP: CFString = "rtsp"
public let kSecAttrProtocolRTSPProxy: CFString = "rtsx"
public let kSecAttrProtocolDAAP: CFString = "daap"
public let kSecAttrProtocolEPPC: CFString = "eppc"
public let kSecAttrProtocolIPP: CFString = "ipp "
public let kSecAttrProtocolNNTPS: CFString = "ntps"
public let kSecAttrProtocolLDAPS: CFString = "ldps"
public let kSecAttrProtocolTelnetS: CFString = "tels"
public let kSecAttrProtocolIMAPS: CFString = "imps"
public let kSecAttrProtocolIRCS: CFString = "ircs"
public let kSecAttrProtocolPOP3S: CFString = "pops"

// MARK: kSecAttrAuthenticationType values
public let kSecAttrAuthenticationTypeNTLM: CFString = "ntlm"
public let kSecAttrAuthenticationTypeMSN: CFString = "msna"
public let kSecAttrAuthenticationTypeDPA: CFString = "dpaa"
public let kSecAttrAuthenticationTypeRPA: CFString = "rpaa"
public let kSecAttrAuthenticationTypeHTTPBasic: CFString = "http"
public let kSecAttrAuthenticationTypeHTTPDigest: CFString = "httd"
public let kSecAttrAuthenticationTypeHTMLForm: CFString = "form"
public let kSecAttrAuthenticationTypeDefault: CFString = "dflt"

// MARK: Values and results
public let kSecValueData: CFString = "v_Data"
public let kSecValueRef: CFString = "v_Ref"
public let kSecValuePersistentRef: CFString = "v_PersistentRef"
public let kSecReturnData: CFString = "r_Data"
public let kSecReturnAttributes: CFString = "r_Attributes"
public let kSecReturnRef: CFString = "r_Ref"
public let kSecReturnPersistentRef: CFString = "r_PersistentRef"

// MARK: Search
public let kSecMatchLimit: CFString = "m_Limit"
public let kSecMatchLimitOne: CFString = "m_LimitOne"
public let kSecMatchLimitAll: CFString = "m_LimitAll"
public let kSecMatchItemList: CFString = "m_ItemList"
// Declared for code that names them; Keygate refuses them with errSecUnimplemented.
public let kSecMatchCaseInsensitive: CFString = "m_CaseInsensitive"
public let kSecMatchSearchList: CFString = "m_SearchList"
public let kSecMatchPolicy: CFString = "m_Policy"
public let kSecMatchIssuers: CFString = "m_Issuers"
public let kSecMatchEmailAddressIfPresent: CFString = "m_EmailAddressIfPresent"
public let kSecMatchSubjectContains: CFString = "m_SubjectContains"
public let kSecMatchTrustedOnly: CFString = "m_TrustedOnly"
public let kSecMatchValidOnDate: CFString = "m_ValidOnDate"

// MARK: Use
public let kSecUseAuthenticationContext: CFString = "u_AuthCtx"
public let kSecUseAuthenticationUI: CFString = "u_AuthUI"
public let kSecUseAuthenticationUIAllow: CFString = "u_AuthUIA"
public let kSecUseAuthenticationUIFail: CFString = "u_AuthUIF"
public let kSecUseAuthenticationUISkip: CFString = "u_AuthUIS"
public let kSecUseOperationPrompt: CFString = "u_OpPrompt"
/// Deprecated by Apple in favour of kSecUseAuthenticationUI; `true` means Fail.
public let kSecUseNoAuthenticationUI: CFString = "u_NoAuthUI"
/// macOS's switch to the data-protection keychain. Keygate has one keychain; accepted and ignored.
public let kSecUseDataProtectionKeychain: CFString = "nleg"
// Declared for code that names them; Keygate refuses them with errSecUnimplemented.
public let kSecUseKeychain: CFString = "u_Keychain"
public let kSecUseItemList: CFString = "u_ItemList"
public let kSecUseUserIndependentKeychain: CFString = "u_UserIndependentKeychain"

// MARK: Attributes Keygate refuses with errSecUnimplemented (key attributes, token and sync views)
public let kSecAttrPersistentReference: CFString = "persistref"
public let kSecAttrSyncViewHint: CFString = "vwht"
public let kSecAttrTokenID: CFString = "tkid"
public let kSecAttrApplicationTag: CFString = "atag"
public let kSecAttrApplicationLabel: CFString = "klbl"
public let kSecAttrKeyClass: CFString = "kcls"
/// Apple's key type has the same string as kSecAttrType.
public let kSecAttrKeyType: CFString = "type"
public let kSecAttrKeySizeInBits: CFString = "bsiz"
public let kSecAttrEffectiveKeySize: CFString = "esiz"
public let kSecAttrIsPermanent: CFString = "perm"
