// What opening one gated item takes, fetched by the bus loop when a client asks to Unlock it, so
// the worker that asks the person touches no store: Keygate's own item (the CLI's or the
// library's) with its blob, or a client's item's blob and the 16 bytes it is sealed to. Holds no
// key: the blob opens only with the gatekeeper's shares after a fresh authentication
// (KeychainOperations.secretInPerson, openClientInPerson).
import Keygate
import KeygateCore

package enum GatedOpening: Sendable {
    case keygate(StoredItem)
    case client(blob: [UInt8], uid: [UInt8])
}
