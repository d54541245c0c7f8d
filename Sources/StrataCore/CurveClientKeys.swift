/// What a client needs to reach a CURVE server: the server's public key (the client
/// refuses any server without its secret half) and the client's own pair (whose public
/// half must be on the server's allow-list).
public struct CurveClientKeys: Sendable, Equatable {
    public let serverKey: CurveKey
    public let client: CurveKeyPair

    public init(serverKey: CurveKey, client: CurveKeyPair) {
        self.serverKey = serverKey
        self.client = client
    }
}
