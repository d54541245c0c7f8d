import CZeroMQ
import StrataCore

extension ZMQSocket {
    /// ZMQ_ZAP_ENFORCE_DOMAIN: a draft option of libzmq 4.3, so zmq.h hides its name. With it,
    /// a CURVE server whose ZAP handler is gone refuses every handshake instead of admitting
    /// every client.
    static let zapEnforceDomain: Int32 = 93

    /// Makes this socket a CURVE server holding `secretKey`: every connection is encrypted,
    /// and admitted only if the `ZAPHandler` running in the same context says so for `domain`.
    /// Call it before `bind`.
    public func makeCurveServer(secretKey: CurveKey, domain: ZAPHandler.Domain = .requests) throws(ZMQError) {
        try setOption(ZMQ_CURVE_SERVER, Int32(1))
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: secretKey.bytes)
        try setOption(ZMQ_ZAP_DOMAIN, bytes: Array(domain.rawValue.utf8))
        do {
            try setOption(Self.zapEnforceDomain, Int32(1))
        } catch where error.code == EINVAL {
            // A libzmq built without draft options: the handler, bound before every server
            // socket and closed after them, is then the only guard, as it is meant to be.
        }
    }

    /// Makes this socket a CURVE client: it talks only to the server holding the secret half
    /// of `keys.serverKey`, and presents `keys.client`. Call it before `connect`.
    public func makeCurveClient(_ keys: CurveClientKeys) throws(ZMQError) {
        try setOption(ZMQ_CURVE_SERVERKEY, bytes: keys.serverKey.bytes)
        try setOption(ZMQ_CURVE_PUBLICKEY, bytes: keys.client.publicKey.bytes)
        try setOption(ZMQ_CURVE_SECRETKEY, bytes: keys.client.secretKey.bytes)
    }
}
