import Bus

extension Configuration {
    /// A long-running process, by the endpoints it binds and those it connects to.
    enum EndpointUser {
        /// Binds all three.
        case serve
        /// Connects to the events and history endpoints.
        case projector
        /// Hands all three to serve to bind, and the events and history endpoints to both
        /// projectors to connect to, as written.
        case up
    }

    /// Refuses (exit 2) an endpoint the process could never bind or connect to (`Endpoint`: no
    /// transport, a port that is none, a bind's host that is no address or interface here, an IPv6
    /// address), and one that is inproc://, which no other process reaches. Asked with the rest of
    /// the settings, before anything is made: found at the bind or the connect, `serve` had made a
    /// new store, its checkpoint key and its key store in a fresh data directory, a projector its
    /// file, and `up` let serve do so.
    func requireUsableEndpoints(_ user: EndpointUser) throws(UsageError) {
        let all = [
            ("commands", commandsEndpoint), ("events", eventsEndpoint), ("history", historyEndpoint),
        ]
        let bound = user == .projector ? [] : all
        let connected = user == .serve ? [] : Array(all.dropFirst())
        for (name, endpoint) in bound + connected where endpoint.hasPrefix("inproc://") {
            throw UsageError(
                "the \(name) endpoint \(endpoint) is one no other process can reach: inproc:// reaches only within "
                    + "the process that binds it, and serve, its clients and the projectors are processes of their "
                    + "own; use tcp:// or ipc://")
        }
        for (name, endpoint) in bound {
            if let problem = Endpoint.problem(in: endpoint, binding: true) {
                throw UsageError("the \(name) endpoint \(endpoint) cannot be bound: \(problem.reason)")
            }
        }
        for (name, endpoint) in connected {
            if user == .up { try Self.requireConnectableAsBound(endpoint, name) }
            if let problem = Endpoint.problem(in: endpoint, binding: false) {
                throw UsageError("the \(name) endpoint \(endpoint) cannot be connected to: \(problem.reason)")
            }
        }
    }

    /// Refuses an endpoint `up` would hand its projectors as serve binds it, which they cannot
    /// connect to as written: a port serve chooses (`*` or 0, and `ipc://*`), which they would never
    /// learn, or the host `*`, which names no address. They ended at once with exit 2 and stayed
    /// down, leaving serve to run alone with nothing kept up to date.
    private static func requireConnectableAsBound(_ endpoint: String, _ name: String) throws(UsageError) {
        let chosen: Bool
        if endpoint.hasPrefix("tcp://"), let colon = endpoint.lastIndex(of: ":") {
            let host = endpoint[endpoint.index(endpoint.startIndex, offsetBy: 6)..<colon]
            let port = endpoint[endpoint.index(after: colon)...]
            chosen = host == "*" || port == "*" || port == "0"
        } else {
            chosen = endpoint == "ipc://*"
        }
        guard chosen else { return }
        throw UsageError(
            "the \(name) endpoint \(endpoint) is not one the projectors can connect to, and up connects them to "
                + "the endpoints serve binds: name the host and the port (tcp://0.0.0.0:PORT binds every interface)")
    }
}
