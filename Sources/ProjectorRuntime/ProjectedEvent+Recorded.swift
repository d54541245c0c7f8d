import EventStore
import Events
import Projections
import StrataCore

/// Why a stored event could not be handed to a projection.
struct UnreadableEvent: Error, CustomStringConvertible {
    let description: String
    /// Its personal data could not be opened for want of a readable key store: the event may
    /// be fine, and must not be taken for a poison event.
    var isKeyStoreFailure = false
}

extension ProjectedEvent {
    /// Decodes a stored event for the projections: its data through the catalog (upcast
    /// to the current schema version) with its personal data opened by `opener` (clear
    /// text, or `[erased]`), its metadata and its time. An erasure also tells the opener to
    /// drop what it holds of the subject's key.
    init(recorded: RecordedEvent, opener: (any PersonalDataOpening)? = nil) throws(UnreadableEvent) {
        var event: StrataEvent
        do {
            event = try recorded.decoded()
        } catch {
            throw UnreadableEvent(description: error.description)
        }
        if let opener {
            if case .personalDataErased(let erased) = event {
                opener.forget(DataSubject(erased.kind, erased.subjectId))
            }
            do {
                event = try event.openingPersonalData(stream: recorded.stream, with: opener)
            } catch where error.kind == .keyStore {
                throw UnreadableEvent(description: error.message, isKeyStoreFailure: true)
            } catch {
                throw UnreadableEvent(description: "its personal data cannot be opened: \(error)")
            }
        }
        guard let recordedAt = Timestamp(recorded.recordedAt) else {
            throw UnreadableEvent(description: "recordedAt is not an RFC 3339 UTC timestamp: \(recorded.recordedAt)")
        }
        let metadata: EventMetadata
        if let canonical = Self.canonicalMetadata(recorded.metadata) {
            metadata = canonical
        } else {
            do {
                metadata = try recorded.decodedMetadata()
            } catch {
                throw UnreadableEvent(description: error.description)
            }
        }
        self.init(
            position: recorded.position, stream: recorded.stream, version: recorded.version, recordedAt: recordedAt,
            metadata: metadata, hash: recorded.hash, event: event)
    }

    /// Metadata as the store writes it (`EventMetadata.canonicalBytes`), read without a
    /// parse tree; nil for anything else, which `decodedMetadata` then reads and judges.
    static func canonicalMetadata(_ bytes: [UInt8]) -> EventMetadata? {
        CanonicalJSONReader.read(bytes) { r throws(CanonicalJSONReader.GiveUp) in
            try r.object { r throws(CanonicalJSONReader.GiveUp) in
                let actor = try r.string("actor")
                let causationId = try r.optionalString("causationId")
                let commandId = try r.string("commandId")
                let correlationId = try r.optionalString("correlationId")
                return EventMetadata(
                    commandId: commandId, actor: actor, correlationId: correlationId, causationId: causationId)
            }
        }
    }
}
