/// The port of a `tcp://` address, checked before libzmq reads it. libzmq takes a port with `atoi`
/// and keeps its low 16 bits: `tcp://127.0.0.1:99999` was bound or reached at port 34463, `:77o2` at
/// port 77, and `:0` was connected to, waited for ever, all without a word.
enum TCPPort {
    /// Why `port` is none a socket can use; nil when it is. `chosen` (a bind, or the source address
    /// of a connect, `tcp://SOURCE:0;HOST:PORT`) also allows `*` and 0, which let the system choose.
    static func problem(_ port: Substring, chosen: Bool) -> String? {
        if port == "*" {
            return chosen ? nil : "port * lets a bind choose one; a connect needs the port, 1 to 65535"
        }
        guard !port.isEmpty, port.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return "port \(port) is not a number"
        }
        let value = port.count > 5 ? Int.max : Int(port) ?? Int.max
        if value > 65_535 { return "port \(port) is beyond 65535" }
        if value == 0 && !chosen { return "port 0 lets a bind choose one; a connect needs the port, 1 to 65535" }
        return nil
    }
}
