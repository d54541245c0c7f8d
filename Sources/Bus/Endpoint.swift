import Glibc

/// An endpoint judged before libzmq is given it, by the rules libzmq (4.3) applies itself, so that
/// a process refuses one it could never bind or connect to along with the rest of its settings,
/// before it makes anything: found at the bind, `serve --commands foo` had made a new store, its
/// checkpoint key and its key store in a fresh data directory first.
///
/// The transports are those the processes use: tcp:// and ipc://, and inproc:// between the
/// threads of one process. TCP is IPv4: no socket here sets ZMQ_IPV6, and without it libzmq binds
/// no IPv6 address and connects to none, trying for ever.
public enum Endpoint {
    /// Why `endpoint` cannot be bound (`binding`) or connected to, with the errno to report; nil when
    /// it can be as far as this machine can tell. A connect's host name is looked up by libzmq as it
    /// connects, and one that is not found yet is waited for like a service that is not up yet.
    public static func problem(in endpoint: String, binding: Bool) -> (reason: String, code: Int32)? {
        // libzmq splits at the first "://" and takes the transport's name as written: `TCP://` is none.
        guard let separator = endpoint.firstRange(of: "://"), separator.lowerBound != endpoint.startIndex else {
            return ("\(endpoint) names no transport; an endpoint is TRANSPORT://ADDRESS, as tcp://HOST:PORT "
                + "or ipc://PATH", EINVAL)
        }
        let transport = endpoint[..<separator.lowerBound]
        let address = endpoint[separator.upperBound...]
        switch transport {
        case "tcp":
            return tcp(address, binding: binding)
        case "ipc":
            return ipc(address, binding: binding)
        case "inproc":
            return address.isEmpty ? ("inproc:// names no endpoint", EINVAL) : nil
        default:
            return ("\(transport):// is not a transport the processes use: tcp:// or ipc://", EPROTONOSUPPORT)
        }
    }

    /// `HOST:PORT`, or `SOURCE:PORT;HOST:PORT` for a connect from a given address (libzmq takes a
    /// source on a bind too, and binds the last address).
    private static func tcp(_ address: Substring, binding: Bool) -> (reason: String, code: Int32)? {
        guard !address.isEmpty else { return ("tcp:// names no address; write tcp://HOST:PORT", EINVAL) }
        let parts = address.split(separator: ";", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return ("\(address) holds more than one ';' (SOURCE:PORT;HOST:PORT)", EINVAL) }
        for (index, part) in parts.enumerated() {
            // A source address is bound, whatever the endpoint: libzmq looks up no name for it.
            let bound = binding || index < parts.count - 1
            if part.isEmpty {
                return ("\(address) holds no address on one side of ';' (SOURCE:PORT;HOST:PORT)", EINVAL)
            }
            guard let colon = part.lastIndex(of: ":") else {
                return ("\(part) names no port; write HOST:PORT", EINVAL)
            }
            if let problem = TCPPort.problem(part[part.index(after: colon)...], chosen: bound) {
                return (problem, EINVAL)
            }
            let host = part[..<colon]
            if let problem = bound ? TCPHost.problemBinding(host) : TCPHost.problemConnecting(host) {
                return problem
            }
        }
        if !binding, let problem = TCPHost.problemInCharacters(address) { return (problem, EINVAL) }
        return nil
    }

    /// A path (`*` for a bind to make one, `@NAME` in the abstract namespace) that fits a Unix
    /// socket's address. What is at the path is `IPCPath`'s to judge, as the bind comes.
    private static func ipc(_ path: Substring, binding: Bool) -> (reason: String, code: Int32)? {
        if path.isEmpty { return ("ipc:// names no path; write ipc://PATH", EINVAL) }
        if path == "@" { return ("ipc://@ names no name in the abstract namespace; write ipc://@NAME", EINVAL) }
        if path == "*" && !binding { return ("ipc://* lets a bind choose a path; a connect needs the path", EINVAL) }
        // libzmq deleted what was at the path before it found the address too long for a socket.
        if path.utf8.count > IPCPath.maximumLength {
            return ("the path is \(path.utf8.count) bytes; a Unix socket's holds at most \(IPCPath.maximumLength)",
                ENAMETOOLONG)
        }
        return nil
    }
}
