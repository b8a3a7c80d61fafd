// A PAM service folder for pam_start_confdir that authenticates with pam_wrapper's
// pam_matrix.so from a `user:password:service` file: real libpam, a known password,
// no root needed.
import Foundation

public final class PAMMatrix {
    public let confdir: String
    public let passdb: String

    /// The installed pam_matrix.so, wherever the multiarch folder is.
    public static var modulePath: String? {
        let fm = FileManager.default
        guard let dirs = try? fm.contentsOfDirectory(atPath: "/usr/lib") else { return nil }
        for d in dirs.sorted() {
            let p = "/usr/lib/\(d)/pam_wrapper/pam_matrix.so"
            if fm.fileExists(atPath: p) { return p }
        }
        return nil
    }

    /// A service folder holding `service`, accepting `user` with `password`.
    public init(service: String, user: String, password: String) throws {
        try Requirement.require(PAMMatrix.modulePath != nil, "pam_wrapper's pam_matrix.so (apt-get install libpam-wrapper)")
        let module = PAMMatrix.modulePath ?? ""
        confdir = NSTemporaryDirectory() + "keygate-pam-matrix-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: confdir, withIntermediateDirectories: true)
        passdb = confdir + "/passdb"
        try "\(user):\(password):\(service)\n".write(toFile: passdb, atomically: true, encoding: .utf8)
        let stack = "auth required \(module) passdb=\(passdb)\naccount required \(module) passdb=\(passdb)\n"
        try stack.write(toFile: confdir + "/" + service, atomically: true, encoding: .utf8)
    }

    deinit { try? FileManager.default.removeItem(atPath: confdir) }
}
