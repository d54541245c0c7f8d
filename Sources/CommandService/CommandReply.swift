import EventStore
import StrataCore

/// A reply on the commands endpoint (CONTRACT.md "Commands"):
/// `{"id","ok":true,"duplicate":false,"events":[{"position","stream","version","type"}]}` or
/// `{"id","ok":false,"error":{"code","reason","message","details"}}`, as canonical JSON.
/// A refusal of a body whose id could not be read carries no `id`.
public enum CommandReply: Sendable, Equatable {
    case accepted(id: String, duplicate: Bool, events: [AppendedEvent])
    case refused(id: String?, duplicate: Bool, error: StrataError)

    public var json: [UInt8] {
        var members: [String: JSONValue] = [:]
        switch self {
        case .accepted(let id, let duplicate, let events):
            members = [
                "id": .string(id), "ok": .bool(true), "duplicate": .bool(duplicate),
                "events": .array(
                    events.map {
                        .object([
                            "position": .integer($0.position), "stream": .string($0.stream),
                            "version": .integer($0.version), "type": .string($0.type),
                        ])
                    }),
            ]
        case .refused(let id, let duplicate, let error):
            members = ["ok": .bool(false), "error": error.json]
            if let id { members["id"] = .string(id) }
            // Only a journaled refusal can be a duplicate; fresh refusals say nothing of it.
            if duplicate { members["duplicate"] = .bool(true) }
        }
        return CanonicalJSON.bytes(.object(members))
    }
}
