import EventStore
import StrataCore

extension RecordedEvent {
    /// Reads an event as the bus and history carry it (`json`). Events of a Strata store
    /// come in canonical form, which is read in one pass, keeping the `data` and `metadata`
    /// bytes as they came once they are checked to be canonical; anything else is read by
    /// `init(jsonBytes:)`, which decides.
    static func fromBus(_ bytes: [UInt8]) throws(EventJSONError) -> RecordedEvent {
        if let event = CanonicalJSONReader.read(bytes, { r throws(CanonicalJSONReader.GiveUp) in
            try RecordedEvent(canonical: &r, depth: 1)
        }) {
            return event
        }
        return try RecordedEvent(jsonBytes: bytes)
    }

    /// Reads the members of an event in canonical form, the event's object being at
    /// `depth` in the document (for the same nesting limit as `JSONParser`).
    init(canonical r: inout CanonicalJSONReader, depth: Int) throws(CanonicalJSONReader.GiveUp) {
        try r.beginObject()
        let data = try r.required("data") { r throws(CanonicalJSONReader.GiveUp) in
            try r.canonicalObject(depth: depth + 1)
        }
        let hash = try r.string("hash")
        let metadata = try r.required("metadata") { r throws(CanonicalJSONReader.GiveUp) in
            try r.canonicalObject(depth: depth + 1)
        }
        let position = try r.integer("position")
        let prevHash = try r.string("prevHash")
        let recordedAt = try r.string("recordedAt")
        let schemaVersion = try r.int("schemaVersion")
        let stream = try r.string("stream")
        let type = try r.string("type")
        let version = try r.integer("version")
        try r.endObject()
        self.init(
            position: position, stream: stream, version: version, type: type, schemaVersion: schemaVersion,
            recordedAt: recordedAt, data: data, metadata: metadata, prevHash: prevHash, hash: hash)
    }
}
