import CZeroMQ

/// A CURVE key pair: the public key a peer is known by, and the secret key it is derived
/// from. Made and checked by libzmq (`zmq_curve_keypair`, `zmq_curve_public`, on libsodium),
/// never by hand.
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: CurveKey
    public let secretKey: CurveKey

    /// Pairs two halves; nil when `publicKey` is not the one `secretKey` derives.
    public init?(publicKey: CurveKey, secretKey: CurveKey) {
        guard Self.publicKey(of: secretKey) == publicKey else { return nil }
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A fresh random pair; nil when this libzmq was built without CURVE.
    public static func generate() -> CurveKeyPair? {
        var publicText = [CChar](repeating: 0, count: CurveKey.z85Count + 1)
        var secretText = [CChar](repeating: 0, count: CurveKey.z85Count + 1)
        guard zmq_curve_keypair(&publicText, &secretText) == 0,
            let publicKey = CurveKey(z85: publicText),
            let secretKey = CurveKey(z85: secretText)
        else { return nil }
        return CurveKeyPair(publicKey: publicKey, secretKey: secretKey)
    }

    /// The public key `secretKey` derives; nil when this libzmq was built without CURVE.
    public static func publicKey(of secretKey: CurveKey) -> CurveKey? {
        var publicText = [CChar](repeating: 0, count: CurveKey.z85Count + 1)
        guard secretKey.z85.withCString({ zmq_curve_public(&publicText, $0) }) == 0 else { return nil }
        return CurveKey(z85: publicText)
    }
}
