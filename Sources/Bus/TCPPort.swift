/// The ports of a `tcp://` endpoint, checked before libzmq reads them. libzmq takes a port with
/// `atoi` and keeps its low 16 bits: `tcp://127.0.0.1:99999` was bound or reached at port 34463,
/// `:77o2` at port 77, and `:0` was connected to, waited for ever, all without a word.
enum TCPPort {
    /// Why `endpoint` names no port it can be used with; nil when it does, or is not TCP (libzmq
    /// judges the rest of it). `binding` also allows `*` and 0, which let the system choose, as
    /// does the source address of a connect (`tcp://SOURCE:0;HOST:PORT`).
    static func problem(in endpoint: String, binding: Bool) -> String? {
        guard endpoint.hasPrefix("tcp://") else { return nil }
        let addresses = endpoint.dropFirst("tcp://".count).split(separator: ";", omittingEmptySubsequences: false)
        for (index, address) in addresses.enumerated() {
            guard let colon = address.lastIndex(of: ":") else { continue }  // libzmq refuses it
            let port = address[address.index(after: colon)...]
            let chosen = binding || index < addresses.count - 1
            if port == "*" {
                if chosen { continue }
                return "port * lets a bind choose one; a connect needs the port, 1 to 65535"
            }
            guard !port.isEmpty, port.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return "port \(port) is not a number"
            }
            let value = port.count > 5 ? Int.max : Int(port) ?? Int.max
            if value > 65_535 { return "port \(port) is beyond 65535" }
            if value == 0 && !chosen { return "port 0 lets a bind choose one; a connect needs the port, 1 to 65535" }
        }
        return nil
    }
}
