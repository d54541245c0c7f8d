import Glibc

/// The host of a `tcp://` address, judged as libzmq (4.3) judges it with ZMQ_IPV6 off. A bind (and
/// the source address of a connect) looks up no name: it takes `*`, an IPv4 address as
/// `getaddrinfo` reads one without a lookup (`127.1` too), or the name of a network interface
/// with an IPv4 address (`lo`, `eth0`). A connect looks its host up as it connects, and tries again
/// for ever while the name is not found, so only what no lookup could ever find is refused here.
enum TCPHost {
    /// Why a bind cannot take `host`, with the errno libzmq gives; nil when it can.
    static func problemBinding(_ host: Substring) -> (reason: String, code: Int32)? {
        if host.isEmpty { return ("the address names no host; tcp://*:PORT binds every interface", ENODEV) }
        let (name, zoneProblem) = withoutZone(withoutBrackets(host))
        if let zoneProblem { return (zoneProblem, EINVAL) }
        if name == "*" || hasIPv4Address(interface: name) || isIPv4Address(name) { return nil }
        if name.contains(":") { return (ipv6(host), ENODEV) }
        return ("\(host) is neither *, an IPv4 address nor one of this machine's network interfaces; a bind "
            + "looks up no host name (tcp://127.0.0.1:PORT binds the loopback, tcp://0.0.0.0:PORT every interface)",
            ENODEV)
    }

    /// Why a connect to `host` could never be made, with the errno to report; nil when it could.
    static func problemConnecting(_ host: Substring) -> (reason: String, code: Int32)? {
        if host.isEmpty { return ("the address names no host; write HOST:PORT", EINVAL) }
        if host == "*" { return ("the host * lets a bind take every interface; a connect needs the host", EINVAL) }
        let (name, zoneProblem) = withoutZone(withoutBrackets(host))
        if let zoneProblem { return (zoneProblem, EINVAL) }
        if name.contains(":") { return (ipv6(host), EINVAL) }
        return nil
    }

    /// libzmq's own first look at a connect's address (`socket_base_t::connect`): it begins with a
    /// letter, a digit, `[` or `:`, and holds only those and `.`, `-`, `%`, `;`, `]`, `_`, `*`.
    static func problemInCharacters(_ address: Substring) -> String? {
        let others = Set(".-:%;[]_*".unicodeScalars)
        func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
        }
        if let first = address.unicodeScalars.first, !isAlphanumeric(first), first != "[", first != ":" {
            return "\(address) begins with '\(first)'; a host begins with a letter, a digit or '['"
        }
        guard let stray = address.unicodeScalars.first(where: { !isAlphanumeric($0) && !others.contains($0) }) else {
            return nil
        }
        return "\(address) holds '\(stray)', which no host name or address holds"
    }

    private static func ipv6(_ host: Substring) -> String {
        "\(host) is an IPv6 address, and the sockets speak IPv4 (libzmq's ZMQ_IPV6 is off)"
    }

    /// libzmq drops brackets around the whole host (`[::1]`, `[127.0.0.1]`).
    private static func withoutBrackets(_ host: Substring) -> Substring {
        host.count >= 2 && host.first == "[" && host.last == "]" ? host.dropFirst().dropLast() : host
    }

    /// The host before a zone (`%eth0`, `%2`), which must name an interface: libzmq refuses the
    /// address otherwise.
    private static func withoutZone(_ host: Substring) -> (Substring, String?) {
        guard let percent = host.lastIndex(of: "%") else { return (host, nil) }
        let zone = String(host[host.index(after: percent)...])
        let index: UInt32
        if zone.isEmpty {
            index = 0
        } else if let first = zone.utf8.first, isalpha(Int32(first)) != 0 {
            index = if_nametoindex(zone)
        } else {
            index = UInt32(truncatingIfNeeded: atoi(zone))
        }
        guard index == 0 else { return (host[..<percent], nil) }
        return (host[..<percent], "the zone %\(zone) of \(host) names no network interface of this machine")
    }

    /// Whether `getaddrinfo` reads `name` as an IPv4 address, as libzmq asks it for a bind.
    private static func isIPv4Address(_ name: Substring) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(String(name), nil, &hints, &found) == 0 else { return false }
        freeaddrinfo(found)
        return true
    }

    /// Whether a network interface called `name` has an IPv4 address, which libzmq binds.
    private static func hasIPv4Address(interface name: Substring) -> Bool {
        var interfaces: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&interfaces) == 0 else { return false }
        defer { freeifaddrs(interfaces) }
        var next = interfaces
        while let interface = next {
            if let address = interface.pointee.ifa_addr, Int32(address.pointee.sa_family) == AF_INET,
                String(cString: interface.pointee.ifa_name) == name
            {
                return true
            }
            next = interface.pointee.ifa_next
        }
        return false
    }
}
