import Bus

/// A ROUTER bound on loopback that reports replies it cannot route, and a DEALER with room for
/// one reply connected to it: what the tests of routing a reply to a peer that does not read
/// start from.
public struct RouterAndDealer {
    public let router: ZMQSocket
    public let dealer: ZMQSocket
    /// The DEALER's routing id, learnt from a first message it sent.
    public let peer: [UInt8]

    /// - Parameter routerSendHighWaterMark: the replies the ROUTER queues for the DEALER.
    public init(_ context: ZMQContext, routerSendHighWaterMark: Int32) throws {
        router = try ZMQSocket(context, .router)
        try router.setHighWaterMarks(send: routerSendHighWaterMark, receive: 0)
        try router.reportUnroutable()
        try router.bind("tcp://127.0.0.1:*")
        dealer = try ZMQSocket(context, .dealer)
        try dealer.setHighWaterMarks(send: 0, receive: 1)
        try dealer.connect(try router.lastEndpoint())
        try dealer.send([[], Array("hello".utf8)])
        guard try zmqPollReadable([router], timeoutMilliseconds: 5_000) == [0],
            let first = try router.receive(wait: false)
        else { throw ServiceProcessError("the DEALER's first message did not reach the ROUTER in 5 s") }
        peer = first[0]
    }

    /// The three, to take apart in one line.
    public var sockets: (router: ZMQSocket, dealer: ZMQSocket, peer: [UInt8]) { (router, dealer, peer) }
}
