import StrataCore

/// Checks events one after another against the hash chain, as a projector does for every
/// event it applies, reusing its buffers: building each canonical body, decoding the
/// previous hash and encoding the new one in fresh arrays cost a quarter as much again
/// as the SHA-256 itself.
public struct ChainFollower {
    /// The hash of the last event this follower checked, in hex and as bytes: the next
    /// event's previous hash, which then need not be decoded again.
    private var tipHex: String?
    private var tip = [UInt8](repeating: 0, count: 32)
    private var computed = [UInt8](repeating: 0, count: 32)
    private var computedHex = [UInt8](repeating: 0, count: 64)
    private var body: [UInt8] = []

    public init() {}

    /// Whether `event`'s `prevHash` is `previousHash` and its `hash` is SHA-256(`previousHash`
    /// ‖ its canonical body): the event links onto the chain that ends there.
    public mutating func links(_ event: RecordedEvent, after previousHash: String) -> Bool {
        guard event.prevHash == previousHash else { return false }
        if tipHex != previousHash {
            guard let bytes = Hex.decode(previousHash), bytes.count == 32 else { return false }
            tip = bytes
        }
        body.removeAll(keepingCapacity: true)
        event.appendCanonicalBody(to: &body)
        body.withUnsafeBytes { HashChain.hash(previous: tip, canonicalEvent: $0, into: &computed) }
        Hex.encode(computed, into: &computedHex)
        var stored = event.hash
        guard stored.withUTF8({ HashChain.equal(UnsafeRawBufferPointer($0), computedHex) }) else {
            tipHex = nil
            return false
        }
        swap(&tip, &computed)
        tipHex = event.hash
        return true
    }
}
