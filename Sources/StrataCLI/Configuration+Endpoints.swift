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
            guard let problem = Endpoint.problem(in: endpoint, binding: false) else { continue }
            // `up` hands the projectors the endpoints serve binds, and each passed as a bind above:
            // one a connect cannot take lets serve choose (a port, every interface, a path), which
            // the projectors would never learn. They ended at once with exit 2 and stayed down,
            // leaving serve to run alone with nothing kept up to date.
            if user == .up {
                throw UsageError(
                    "the \(name) endpoint \(endpoint) is not one the projectors can connect to, and up connects them "
                        + "to the endpoints serve binds: \(problem.reason); name the host and the port "
                        + "(tcp://0.0.0.0:PORT binds every interface)")
            }
            throw UsageError("the \(name) endpoint \(endpoint) cannot be connected to: \(problem.reason)")
        }
    }
}
