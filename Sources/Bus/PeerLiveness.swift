import CZeroMQ

/// How a socket notices that a peer is gone without a word (its host down, its link a
/// blackhole that drops packets and answers with no reset), and lets its connection go. Left
/// alone, libzmq keeps such a connection, and what it queued for the peer (up to the PUB's
/// 100,000 events: about 1 KB each), for as long as TCP keeps retrying: some 15 minutes while
/// there is data to send, and for ever on an idle connection. Every socket gets the same
/// settings when it is made (`ZMQSocket.init`); on inproc sockets they do nothing.
///
/// A dead peer is dropped within about 35 s, by whichever notices first:
/// - libzmq's own heartbeat (ZMTP 3.1 PING and PONG): every `heartbeatInterval` a PING, and a
///   connection that brings back nothing at all, not a PONG nor a message, within
///   `heartbeatTimeout` of one is closed. The PING cannot leave while the kernel's send buffer
///   is full, so this alone misses a blackholed subscriber the service was busy sending to.
/// - the peer's PINGs, which carry `heartbeatTTL`: a side that heard one and then nothing more
///   for that long closes the connection, whether its own output is stuck or not. So a
///   subscriber that pings (every Strata client does) is dropped by the service however full
///   its queue is, and never taken for dead while its link is slow: its PINGs come on the
///   quiet direction.
/// - TCP itself (`ZMQ_TCP_MAXRT`, `TCP_USER_TIMEOUT` on Linux): a connection whose sent bytes
///   stay unacknowledged for `retransmissionTimeout` is aborted, as is one whose peer has kept
///   its receive window shut that long (a process stopped or hung, whose kernel still answers).
///   This catches a blackholed peer that does not ping.
///
/// What the values must not do is drop a healthy peer. A slow link delays a PONG behind what is
/// queued before it, but any message at all cancels the timeout, and a peer that pings is heard
/// on the other direction; a busy peer's kernel acknowledges what arrives even while the process
/// does not read. 30 s is far beyond any round trip, and outlasts several lost retransmissions
/// of one segment in a row (TCP doubles its wait after each), and one PING every 5 s costs each
/// connection a few bytes. A connection dropped in error costs a
/// reconnection: a subscriber sees a gap and reads history, a client learns that its requests
/// in flight are not answered (`ConnectionWatch`).
public enum PeerLiveness {
    public static let heartbeatIntervalMilliseconds: Int32 = 5_000
    public static let heartbeatTimeoutMilliseconds: Int32 = 30_000
    /// Sent in each PING (libzmq rounds it to tenths of a second).
    public static let heartbeatTTLMilliseconds: Int32 = 30_000
    public static let retransmissionTimeoutMilliseconds: Int32 = 30_000
    /// How long one attempt to connect may wait for the peer's answer: without it the kernel
    /// retries an unanswered SYN for about two minutes, backing off to 32 s between tries, so a
    /// client whose link came back could wait that long before libzmq tried again.
    public static let connectTimeoutMilliseconds: Int32 = 10_000

    /// The upper bound on noticing a dead peer: a PING at most an interval after it died, then
    /// the timeout.
    public static var detectionBoundMilliseconds: Int32 {
        heartbeatIntervalMilliseconds + heartbeatTimeoutMilliseconds
    }
}

extension ZMQSocket {
    /// Sets `PeerLiveness` on this socket; before `bind` or `connect`, as libzmq reads them then.
    func watchPeerLiveness() throws(ZMQError) {
        try setOption(ZMQ_HEARTBEAT_IVL, PeerLiveness.heartbeatIntervalMilliseconds)
        try setOption(ZMQ_HEARTBEAT_TIMEOUT, PeerLiveness.heartbeatTimeoutMilliseconds)
        try setOption(ZMQ_HEARTBEAT_TTL, PeerLiveness.heartbeatTTLMilliseconds)
        try setOption(ZMQ_TCP_MAXRT, PeerLiveness.retransmissionTimeoutMilliseconds)
        try setOption(ZMQ_CONNECT_TIMEOUT, PeerLiveness.connectTimeoutMilliseconds)
    }
}
