import Events
import StrataCore

/// An event as stored: the columns of the `events` table, bytes exactly as written.
///
/// `data` and `metadata` are canonical JSON; `recordedAt`, `prevHash` and `hash` are
/// the stored text. Nothing is re-encoded on the way out: what is hashed is what is
/// published and replayed.
public struct RecordedEvent: Sendable, Equatable {
    public let position: Int64
    public let stream: String
    public let version: Int64
    public let type: String
    public let schemaVersion: Int
    public let recordedAt: String
    public let data: [UInt8]
    public let metadata: [UInt8]
    public let prevHash: String
    public let hash: String

    public init(
        position: Int64, stream: String, version: Int64, type: String, schemaVersion: Int, recordedAt: String,
        data: [UInt8], metadata: [UInt8], prevHash: String, hash: String
    ) {
        self.position = position
        self.stream = stream
        self.version = version
        self.type = type
        self.schemaVersion = schemaVersion
        self.recordedAt = recordedAt
        self.data = data
        self.metadata = metadata
        self.prevHash = prevHash
        self.hash = hash
    }

    /// The stream's category: what comes before the first `-`.
    public var category: Substring {
        // Found by its byte: walking the name by Characters cost 2.4 k instructions an event.
        guard let dash = stream.utf8.firstIndex(of: UInt8(ascii: "-")) else { return stream[...] }
        return stream[..<dash]
    }

    /// The event decoded into the catalog, upcast to the current schema version.
    public func decoded() throws(EventDecodingError) -> StrataEvent {
        try EventRegistry.decode(type: type, schemaVersion: schemaVersion, data: data)
    }

    /// The metadata decoded (with the strict parser: projectors read it for every event).
    public func decodedMetadata() throws(EventJSONError) -> EventMetadata {
        guard let json = try? JSONParser.parse(metadata), let commandId = json["commandId"]?.stringValue,
            let actor = json["actor"]?.stringValue
        else {
            throw EventJSONError("the metadata of position \(position) lacks commandId or actor")
        }
        return EventMetadata(
            commandId: commandId, actor: actor, correlationId: json["correlationId"]?.stringValue,
            causationId: json["causationId"]?.stringValue)
    }

    /// The bytes the chain hashes: the canonical event without `hash` and `prevHash`.
    public var canonicalBody: [UInt8] {
        RecordedEvent.envelope(
            data: data, hash: nil, metadata: metadata, position: position, prevHash: nil, recordedAt: recordedAt,
            schemaVersion: schemaVersion, stream: stream, type: type, version: version)
    }

    /// `canonicalBody`, appended to `out` (a buffer the caller reuses).
    func appendCanonicalBody(to out: inout [UInt8]) {
        RecordedEvent.appendEnvelope(
            to: &out, data: data, hash: String?.none?.utf8, metadata: metadata, position: position,
            prevHash: String?.none?.utf8, recordedAt: recordedAt.utf8, schemaVersion: Int64(schemaVersion),
            stream: stream.utf8, type: type.utf8, version: version)
    }

    /// The event as the bus, history and `replay` carry it: canonical JSON with the hashes.
    public var json: [UInt8] {
        RecordedEvent.envelope(
            data: data, hash: hash, metadata: metadata, position: position, prevHash: prevHash, recordedAt: recordedAt,
            schemaVersion: schemaVersion, stream: stream, type: type, version: version)
    }

    /// Splices the stored canonical pieces into one canonical object, keys in RFC 8785
    /// order (data, hash, metadata, position, prevHash, recordedAt, schemaVersion,
    /// stream, type, version), without decoding `data` or `metadata` again.
    static func envelope(
        data: [UInt8], hash: String?, metadata: [UInt8], position: Int64, prevHash: String?, recordedAt: String,
        schemaVersion: Int, stream: String, type: String, version: Int64
    ) -> [UInt8] {
        var out: [UInt8] = []
        // Room for the hashes (128 bytes), the keys and the other members besides.
        out.reserveCapacity(data.count + metadata.count + 384)
        appendEnvelope(
            to: &out, data: data, hash: hash?.utf8, metadata: metadata, position: position, prevHash: prevHash?.utf8,
            recordedAt: recordedAt.utf8, schemaVersion: Int64(schemaVersion), stream: stream.utf8, type: type.utf8,
            version: version)
        return out
    }

    /// A fixed piece of the envelope (a key and its punctuation), copied in one go: a string
    /// literal's UTF-8 view is copied through its iterator, byte by byte.
    private static func appendPiece(_ piece: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: piece.utf8Start, count: piece.utf8CodeUnitCount))
    }

    /// The same, appended to `out`, from any byte collections: the verifier passes the
    /// stored columns' bytes straight from SQLite, so each event costs no allocation.
    static func appendEnvelope<Bytes: Collection<UInt8>, Text: Collection<UInt8>>(
        to out: inout [UInt8], data: Bytes, hash: Text?, metadata: Bytes, position: Int64, prevHash: Text?,
        recordedAt: Text, schemaVersion: Int64, stream: Text, type: Text, version: Int64
    ) {
        appendPiece(#"{"data":"#, to: &out)
        out.append(contentsOf: data)
        if let hash {
            appendPiece(#","hash":"#, to: &out)
            CanonicalJSON.appendString(utf8: hash, to: &out)
        }
        appendPiece(#","metadata":"#, to: &out)
        out.append(contentsOf: metadata)
        appendPiece(#","position":"#, to: &out)
        CanonicalJSON.appendInteger(position, to: &out)
        if let prevHash {
            appendPiece(#","prevHash":"#, to: &out)
            CanonicalJSON.appendString(utf8: prevHash, to: &out)
        }
        appendPiece(#","recordedAt":"#, to: &out)
        CanonicalJSON.appendString(utf8: recordedAt, to: &out)
        appendPiece(#","schemaVersion":"#, to: &out)
        CanonicalJSON.appendInteger(schemaVersion, to: &out)
        appendPiece(#","stream":"#, to: &out)
        CanonicalJSON.appendString(utf8: stream, to: &out)
        appendPiece(#","type":"#, to: &out)
        CanonicalJSON.appendString(utf8: type, to: &out)
        appendPiece(#","version":"#, to: &out)
        CanonicalJSON.appendInteger(version, to: &out)
        out.append(UInt8(ascii: "}"))
    }
}
