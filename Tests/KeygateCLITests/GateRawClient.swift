// A raw client of the setuid gatekeeper, as an attacker writes one: a python3 program run as the
// test user that starts keygate-gatekeeper (beside the built keygate, or where `make install` put
// it), writes one request frame to its standard input, reads frames until the result ('R') and
// prints `NAME.status=N` and `NAME.message=TEXT`. The request is built by hand from the wire's
// layout (docs/GATEKEEPER.md, "Wire format"), not by Keygate's encoder, so that it says exactly
// what an attacker's would. The gatekeeper's caller, whose scope it reads, is the python process,
// in the script's session.
import Foundation

enum GateRawClient {
    /// Statuses the result carries (KeychainError.Code.status).
    static let interactionNotAllowed = "-25308"
    static let itemNotFound = "-25300"

    /// Shell lines that write ~/gate-raw and define `gate`, the located gatekeeper in $gatekeeper.
    /// `gate NAME OP FLAGS [key=CODE:BYTE] [service=TEXT] [account=TEXT] [long=BYTES] [seed=N] [repeat=N]`:
    /// OP and FLAGS are the wire's numbers; `key` sends one class key of 32 bytes of BYTE (hex);
    /// `long` makes the service and account that many bytes; `seed` sends N bytes of 0x42.
    static let install = #"""
        bindir="$(dirname "$(command -v keygate)")"
        for gatekeeper in "$bindir/keygate-gatekeeper" "$bindir/../libexec/keygate/keygate-gatekeeper" \
                          /usr/local/libexec/keygate/keygate-gatekeeper /usr/libexec/keygate/keygate-gatekeeper; do
            [ -x "$gatekeeper" ] && break
        done
        cat > "$HOME/gate-raw" <<'PY'
        import os, struct, subprocess, sys
        gatekeeper, name, op, flags = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        opts = dict(a.split("=", 1) for a in sys.argv[5:])
        def short(b): return struct.pack(">H", len(b)) + b
        def tiny(b): return bytes([len(b)]) + b
        service = os.fsencode(opts.get("service", ""))
        account = os.fsencode(opts.get("account", ""))
        if "long" in opts:
            service, account = b"S" * int(opts["long"]), b"A" * int(opts["long"])
        # The item's access-control bits (userPresence) go with an item only: the gatekeeper refuses a field an operation does not take.
        frame = bytes([0x51, 1, op, flags]) + struct.pack(">I", 1 if (service or account) else 0)
        if service or account:
            frame += bytes([1]) + short(b"genp") + short(service) + short(account) + short(b"") + short(b"") \
                + struct.pack(">H", 0) + short(b"") + short(b"") + short(b"")
        else:
            frame += bytes([0])
        frame += short(b"") + tiny(b"")
        if "key" in opts:
            code, byte = opts["key"].split(":")
            frame += bytes([1, int(code)]) + bytes([int(byte, 16)]) * 32 + tiny(b"")
        else:
            frame += bytes([0])
        frame += bytes([0]) + tiny(b"\x42" * int(opts.get("seed", "0"))) + struct.pack(">I", 0)
        data = struct.pack(">I", len(frame)) + frame
        for _ in range(int(opts.get("repeat", "1"))):
            run = subprocess.run([gatekeeper], input=data, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
            out, i, status, message = run.stdout, 0, None, "no result (exit %d)" % run.returncode
            while i + 4 <= len(out):
                n = struct.unpack(">I", out[i:i + 4])[0]
                body, i = out[i + 4:i + 4 + n], i + 4 + n
                if body[:1] == b"R":
                    status = struct.unpack(">i", body[1:5])[0]
                    length = struct.unpack(">H", body[5:7])[0]
                    message = body[7:7 + length].decode("utf-8", "replace").replace("\n", " ")
        print("%s.status=%s" % (name, status))
        print("%s.message=%s" % (name, message))
        PY
        gate() { python3 "$HOME/gate-raw" "$gatekeeper" "$@"; }
        """#

    /// The wire's operation numbers (GateRequest.Operation) and flags (GateRequest.Flags).
    enum Op {
        static let certify = 7, presence = 5, validate = 10, fingerUnlockArm = 12, fingerUnlock = 13
    }
    static let noPrompt = 1
}
