import EventStore
import Events
import Projections
import StrataCore

/// Why a stored event could not be handed to a projection.
struct UnreadableEvent: Error, CustomStringConvertible {
    let description: String
}

extension ProjectedEvent {
    /// Decodes a stored event for the projections: its data through the catalog (upcast
    /// to the current schema version), its metadata and its time.
    init(recorded: RecordedEvent) throws(UnreadableEvent) {
        let event: StrataEvent
        do {
            event = try recorded.decoded()
        } catch {
            throw UnreadableEvent(description: error.description)
        }
        guard let recordedAt = Timestamp(recorded.recordedAt) else {
            throw UnreadableEvent(description: "recordedAt is not an RFC 3339 UTC timestamp: \(recorded.recordedAt)")
        }
        let metadata: EventMetadata
        do {
            metadata = try recorded.decodedMetadata()
        } catch {
            throw UnreadableEvent(description: error.description)
        }
        self.init(
            position: recorded.position, stream: recorded.stream, version: recorded.version, recordedAt: recordedAt,
            metadata: metadata, hash: recorded.hash, event: event)
    }
}
