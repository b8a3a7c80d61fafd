// Apple's LAPolicy, with Apple's raw values. deviceOwnerAuthentication is a PAM
// authentication through the `keygate` service; the biometric policy needs a fingerprint
// module in that stack (see LABiometryType); the watch policies are never available.

public enum LAPolicy: Int, Sendable {
    case deviceOwnerAuthenticationWithBiometrics = 1
    case deviceOwnerAuthentication = 2
    case deviceOwnerAuthenticationWithWatch = 3
    case deviceOwnerAuthenticationWithBiometricsOrWatch = 4
    case deviceOwnerAuthenticationWithWristDetection = 5
}

/// Apple's cap on `touchIDAuthenticationAllowableReuseDuration`: five minutes.
public let LATouchIDAuthenticationMaximumAllowableReuseDuration: TimeInterval = 300
