import EventStore
import Events
import StrataCore

/// The sealed fields of a stored event, opened: what history adds beside the events for a
/// key with the `personal-data` scope that asks for it (`"open":true`).
///
/// Found by walking the stored `data`, not through the catalog, so that every sealed string
/// is opened whatever the event's type or schema version, and named by its JSON pointer into
/// that stored `data` (RFC 6901: `/name`, `/customer/taxId`). The event itself is never
/// changed: its hash is over the sealed bytes.
enum OpenedFields {
    /// Pointer → clear text (or `[erased]`) for each sealed string in `event`'s data; empty
    /// when it has none.
    static func of(
        _ event: RecordedEvent, with opener: any PersonalDataOpening
    ) throws(PersonalDataError) -> [String: String] {
        guard PersonalData.mayBeSealed(in: event.data) else { return [:] }
        guard let data = try? JSONParser.parse(event.data) else { return [:] }
        var opened: [String: String] = [:]
        try walk(data, pointer: "", stream: event.stream, opener: opener, into: &opened)
        return opened
    }

    private static func walk(
        _ value: JSONValue, pointer: String, stream: String, opener: any PersonalDataOpening,
        into opened: inout [String: String]
    ) throws(PersonalDataError) {
        switch value {
        case .string(let text) where PersonalData(text).isSealed:
            opened[pointer] = try opener.open(PersonalData(text), stream: stream).value
        case .object(let members):
            for (key, member) in members {
                try walk(member, pointer: pointer + "/" + escape(key), stream: stream, opener: opener, into: &opened)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                try walk(element, pointer: pointer + "/\(index)", stream: stream, opener: opener, into: &opened)
            }
        default:
            break
        }
    }

    /// RFC 6901: `~` as `~0`, `/` as `~1`.
    private static func escape(_ key: String) -> String {
        key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
    }
}
