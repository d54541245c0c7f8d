import EventStore
import Events
import Foundation
import StrataCore
import SubjectKeys

/// What an event store says of the key store beside it: a store that holds personal data
/// sealed under subjects' keys needs the key store those keys are in.
///
/// `SubjectKeyStore(writingAt:)` makes a new, empty key store where there is none, as a new
/// data directory needs. Beside a store whose events are sealed, that lost every subject's
/// personal data without a word (each read `[erased]`), gave subjects already known new keys,
/// and let an email already taken be taken again, as its keyed digest changed with the keys.
/// `serve` and `admin bootstrap` refuse to start so; the projectors already did.
public enum SealedHistory {
    /// The event types whose data can carry personal fields (`StrataEvent.personalDataSubject`).
    static let types = [
        UserRegistered.eventType, ProfileUpdated.eventType, AccountOpened.eventType, AccountUpdated.eventType,
        InvoiceCreated.eventType,
    ]

    /// The position of the first event with a sealed personal field; nil when there is none (a
    /// new store, or one written before personal data was sealed, whose fields are clear). In a
    /// store of sealed events that is its first event of those types, so it reads one or two.
    public static func firstSealedEvent(in store: SQLiteEventStore) throws(StoreError) -> Int64? {
        var found: Int64?
        try store.forEachEvent(matching: ReplayFilter(types: types)) { row in
            let event = row.event
            guard PersonalData.mayBeSealed(in: event.data), let decoded = try? event.decoded() else { return true }
            var sealed = false
            _ = decoded.mappingPersonalData { value in
                sealed = sealed || value.isSealed
                return value
            }
            if sealed { found = event.position }
            return !sealed
        }
        return found
    }

    /// Why the key store at `keyStorePath` must not be made anew beside `store`: nil when it
    /// exists, or when the store holds nothing sealed.
    public static func missingKeyStore(
        _ keyStorePath: String, beside store: SQLiteEventStore, storePath: String
    ) throws(StoreError) -> String? {
        guard !FileManager.default.fileExists(atPath: keyStorePath),
            let position = try firstSealedEvent(in: store)
        else { return nil }
        return "\(keyStorePath) is missing, but \(storePath) holds personal data sealed under its keys (the first at "
            + "position \(position)): without them every subject's personal data would read [erased] and emails "
            + "could be taken twice. Put the key store back (strata restore brings the one a backup holds). If it "
            + "is lost for good, make an empty one in its place (install -m 600 /dev/null \(keyStorePath)) to go "
            + "on without that personal data"
    }
}
