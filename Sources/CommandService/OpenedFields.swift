import EventStore
import Events
import StrataCore

/// The sealed fields of a stored event, opened: what history adds beside the events for a
/// key with the `personal-data` scope that asks for it (`"open":true`).
///
/// The catalog says which values are sealed personal data (`mappingPersonalData`), as it says
/// for every reader: free text that merely begins as the sealed form does (an invoice's notes,
/// a reason) is none, and is neither opened nor a reason to refuse the page. Each value is
/// found by walking the stored `data`, so that it is named by its JSON pointer into that
/// stored `data` (RFC 6901: `/name`, `/customer/taxId`) whatever schema version it was stored
/// in. The event itself is never changed: its hash is over the sealed bytes.
enum OpenedFields {
    /// Pointer → clear text (or `[erased]`) for each sealed personal field in `event`'s data;
    /// empty when it has none.
    static func of(
        _ event: RecordedEvent, with opener: any PersonalDataOpening
    ) throws(PersonalDataError) -> [String: String] {
        guard PersonalData.mayBeSealed(in: event.data) else { return [:] }
        let sealed = sealedValues(of: event)
        guard !sealed.isEmpty, let data = try? JSONParser.parse(event.data) else { return [:] }
        var opened: [String: String] = [:]
        try walk(data, pointer: "", sealed: sealed, stream: event.stream, opener: opener, into: &opened)
        return opened
    }

    /// The sealed values of the event's personal fields, as the catalog names them (unique: a
    /// random nonce each); none for an event that cannot be decoded.
    private static func sealedValues(of event: RecordedEvent) -> Set<String> {
        guard let decoded = try? event.decoded(), decoded.personalDataSubject != nil else { return [] }
        var values: Set<String> = []
        _ = decoded.mappingPersonalData { value in
            if value.isSealed { values.insert(value.value) }
            return value
        }
        return values
    }

    private static func walk(
        _ value: JSONValue, pointer: String, sealed: Set<String>, stream: String, opener: any PersonalDataOpening,
        into opened: inout [String: String]
    ) throws(PersonalDataError) {
        switch value {
        case .string(let text) where sealed.contains(text):
            opened[pointer] = try opener.open(PersonalData(text), stream: stream).value
        case .object(let members):
            for (key, member) in members {
                try walk(
                    member, pointer: pointer + "/" + escape(key), sealed: sealed, stream: stream, opener: opener,
                    into: &opened)
            }
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                try walk(
                    element, pointer: pointer + "/\(index)", sealed: sealed, stream: stream, opener: opener,
                    into: &opened)
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
