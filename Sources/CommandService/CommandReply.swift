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
        switch self {
        case .accepted(let id, let duplicate, let events):
            // Every accepted command gets one: written member by member, not built as a tree
            // of values and sorted (24 k instructions a reply on the writer's thread).
            var out: [UInt8] = []
            out.reserveCapacity(64 + events.count * 80)
            // Booleans, strings and integers only: nothing here can be refused.
            try? CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
                o.bool("duplicate", duplicate)
                try o.objects("events", events)
                o.string("id", id)
                o.bool("ok", true)
            }
            return out
        case .refused(let id, let duplicate, let error):
            var members: [String: JSONValue] = ["ok": .bool(false), "error": error.json]
            if let id { members["id"] = .string(id) }
            // Only a journaled refusal can be a duplicate; fresh refusals say nothing of it.
            if duplicate { members["duplicate"] = .bool(true) }
            return CanonicalJSON.bytes(.object(members))
        }
    }
}
