import StrataCore

/// Why an event as the bus or history carries it could not be read back.
public struct EventJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension RecordedEvent {
    /// Reads an event in the shape the bus, history and `replay` carry (`json`).
    ///
    /// `data` and `metadata` are written back in canonical form; for an event that came
    /// from a Strata store they are the stored bytes again, which is what lets a reader
    /// recompute the hash chain from what it received.
    public init(json value: JSONValue) throws(EventJSONError) {
        guard case .object(let members) = value else { throw EventJSONError("an event is a JSON object") }
        func text(_ key: String) throws(EventJSONError) -> String {
            guard let text = members[key]?.stringValue else { throw EventJSONError("event field \(key) is missing or not a string") }
            return text
        }
        func integer(_ key: String) throws(EventJSONError) -> Int64 {
            guard let number = members[key]?.integerValue else {
                throw EventJSONError("event field \(key) is missing or not an integer")
            }
            return number
        }
        guard let data = members["data"], case .object = data else { throw EventJSONError("event field data is not an object") }
        guard let metadata = members["metadata"], case .object = metadata else {
            throw EventJSONError("event field metadata is not an object")
        }
        let schemaVersion = try integer("schemaVersion")
        guard let version = Int(exactly: schemaVersion) else { throw EventJSONError("schemaVersion is out of range") }
        self.init(
            position: try integer("position"), stream: try text("stream"), version: try integer("version"),
            type: try text("type"), schemaVersion: version, recordedAt: try text("recordedAt"),
            data: CanonicalJSON.bytes(data), metadata: CanonicalJSON.bytes(metadata), prevHash: try text("prevHash"),
            hash: try text("hash"))
    }

    /// Reads an event from its JSON bytes.
    public init(jsonBytes bytes: some Collection<UInt8>) throws(EventJSONError) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw EventJSONError("an event is not valid JSON: \(error)")
        }
        try self.init(json: value)
    }

    /// Whether `hash` is SHA-256(`previousHash` ‖ this event's canonical body) and
    /// `prevHash` is `previousHash`: the event links onto the chain that ends there.
    public func continuesChain(from previousHash: String) -> Bool {
        var follower = ChainFollower()
        return follower.links(self, after: previousHash)
    }
}
