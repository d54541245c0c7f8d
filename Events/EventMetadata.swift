import StrataCore

/// What every event carries besides its data: which command caused it and who acted.
///
/// Operator acts (the first admin's bootstrap) use `operator-<what>-<id>` as command id
/// and `operator` as actor.
public struct EventMetadata: Sendable, Hashable, Codable {
    public var commandId: String
    public var actor: String
    public var correlationId: String?
    public var causationId: String?

    public init(commandId: String, actor: String, correlationId: String? = nil, causationId: String? = nil) {
        self.commandId = commandId
        self.actor = actor
        self.correlationId = correlationId
        self.causationId = causationId
    }

    /// Canonical JSON of the metadata, as stored in the `metadata` column; written
    /// directly in RFC 8785 key order because every appended command needs it.
    public var canonicalBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        // Strings only: nothing here can be refused.
        try? CanonicalObjectWriter.write(to: &out) { o in
            o.string("actor", actor)
            o.optionalString("causationId", causationId)
            o.string("commandId", commandId)
            o.optionalString("correlationId", correlationId)
        }
        return out
    }

    /// The metadata as a JSON value.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["commandId": .string(commandId), "actor": .string(actor)]
        if let correlationId { members["correlationId"] = .string(correlationId) }
        if let causationId { members["causationId"] = .string(causationId) }
        return .object(members)
    }
}
