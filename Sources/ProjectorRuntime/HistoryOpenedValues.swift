import EventStore
import Events
import StrataCore
import Synchronization

/// How a projector away from the service opens personal data: history opens it
/// (`"open":true`, a key with the `personal-data` scope) and this keeps what each page
/// brought, sealed value → clear text, until the event carrying it is applied.
///
/// A sealed value is unique (a random nonce each), so the value itself says which clear
/// text is its own. A value history did not open cannot be opened here: the projector
/// takes every event that carries personal data from history, never from the bus
/// (`needsHistory(_:)`).
public final class HistoryOpenedValues: PersonalDataOpening {
    private let values = Mutex<[String: String]>([:])

    public init() {}

    /// Remembers the clear text history sent for each sealed value of `page`.
    public func learn(_ page: HistoryPage) throws(HistoryError) {
        guard !page.opened.isEmpty else { return }
        var learnt: [String: String] = [:]
        for event in page.events {
            guard let fields = page.opened[event.position] else { continue }
            guard let data = try? JSONParser.parse(event.data) else {
                throw HistoryError(
                    .unreadable, "history opened fields of position \(event.position), whose data is not JSON")
            }
            for (pointer, clear) in fields {
                guard let sealed = Self.string(at: pointer, in: data), PersonalData(sealed).isSealed else {
                    throw HistoryError(
                        .unreadable,
                        "history opened \(pointer) of position \(event.position), which is no sealed value")
                }
                learnt[sealed] = clear
            }
        }
        values.withLock { $0.merge(learnt) { _, new in new } }
    }

    /// Whether `event` carries personal data, which a projector away from the service must
    /// take from history, opened, rather than from the bus.
    public static func needsHistory(_ event: RecordedEvent) -> Bool {
        PersonalData.mayBeSealed(in: event.data)
    }

    public func open(_ sealed: PersonalData, stream: String) throws(PersonalDataError) -> PersonalData {
        guard let clear = values.withLock({ $0.removeValue(forKey: sealed.value) }) else {
            throw PersonalDataError("a sealed value in \(stream) was not opened by history")
        }
        return PersonalData(clear)
    }

    /// The string at an RFC 6901 pointer (`/customer/name`, `/lines/0/description`).
    static func string(at pointer: String, in value: JSONValue) -> String? {
        var current = value
        for token in pointer.split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            let key = token.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            switch current {
            case .object(let members):
                guard let next = members[key] else { return nil }
                current = next
            case .array(let elements):
                guard let index = Int(key), elements.indices.contains(index) else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current.stringValue
    }
}
