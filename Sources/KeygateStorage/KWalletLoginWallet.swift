// KWallet at a user's first login: pam_kwallet5 makes the wallet "kdewallet" and opens it,
// but kwalletd5 lists a wallet as a Secret Service collection only from its next start, so
// Secret Service programs see no collection and no "default" alias although the wallet is
// open (measured on kwalletd5 5.103: docs/DECISIONS.md). Creating one through CreateCollection
// is no way out: kwalletd5 answers it with its new-wallet password window, a second wallet.
// This asks kwalletd5's own interface (org.kde.kwalletd5) whether the login wallet exists
// and is open, so that the message says what to do. Never changes anything.
internal import Glibc

extension SecretServiceConnection {
    /// The wallet pam_kwallet5 opens at login.
    static let kWalletLoginWallet = "kdewallet"

    /// What kwalletd5 says of the login wallet: nil when it cannot tell (no kwalletd5 on this bus).
    enum LoginWallet: Equatable {
        case missing
        case closed
        case open
    }

    func kWalletLoginWallet(_ deadline: ServiceDeadline) -> LoginWallet? {
        guard let bus = try? connection(deadline) else { return nil }
        let calls = [
            ServiceMethodCall(destination: "org.kde.kwalletd5", path: "/modules/kwalletd5", interface: "org.kde.KWallet",
                              method: "wallets", arguments: nil, replyType: "(as)", action: "list KWallet's wallets"),
            ServiceMethodCall(destination: "org.kde.kwalletd5", path: "/modules/kwalletd5", interface: "org.kde.KWallet",
                              method: "isOpen", arguments: Variant.tuple([Variant.string(Self.kWalletLoginWallet)]),
                              replyType: "(b)", action: "ask whether the KWallet wallet is open"),
        ]
        let replies = exchange(calls, deadline, on: bus)
        guard replies.count == 2, case .success(let wallets) = replies[0] else { return nil }
        guard wallets.child(0)?.strings.contains(Self.kWalletLoginWallet) == true else { return .missing }
        guard case .success(let open) = replies[1] else { return nil }
        return open.child(0)?.boolean == true ? .open : .closed
    }
}
