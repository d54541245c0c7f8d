import EventStore
import Events
import Projections

/// An event made ready for the file: its place in the chain checked and its data decoded
/// for the projections that read it, all without touching the file.
struct PreparedEvent: Sendable {
    enum Work: Sendable {
        /// Skipped by an operator, or read by none of the file's projections.
        case pass
        case apply(ProjectedEvent, [any Projection])
        /// It stops the projection, for this reason.
        case poison(String)
    }

    let event: RecordedEvent
    let work: Work
}

/// The part of applying events that needs no file: checking the chain and decoding. Kept
/// apart so that a rebuild does it on another core while the page before is written.
struct EventPreparer: Sendable {
    struct Route: Sendable {
        let projection: any Projection
        /// nil for a projection of every event.
        let categories: Set<Substring>?
    }

    let routes: [Route]
    /// Positions an operator skipped: passed over, their hash taken as they are.
    let skipped: Set<Int64>
    /// Opens sealed personal data before a projection sees it; nil leaves it sealed.
    let opener: (any PersonalDataOpening)?

    /// Prepares `events`, the first of which follows the event whose hash is `hash`; the
    /// result ends early at the first poison event, since nothing after it is applied.
    func prepare(_ events: some Collection<RecordedEvent>, after hash: String) -> [PreparedEvent] {
        var hash = hash
        var routed: [Substring: [any Projection]] = [:]
        var prepared: [PreparedEvent] = []
        prepared.reserveCapacity(events.count)
        for event in events {
            if !skipped.isEmpty, skipped.contains(event.position) {
                prepared.append(PreparedEvent(event: event, work: .pass))
                hash = event.hash
                continue
            }
            guard event.continuesChain(from: hash) else {
                let reason =
                    event.prevHash == hash
                    ? "the hash chain is broken: hash \(event.hash) does not match the event's contents"
                    : "the hash chain is broken: prevHash \(event.prevHash) is not the hash of position "
                        + "\(event.position - 1) (\(hash))"
                prepared.append(PreparedEvent(event: event, work: .poison(reason)))
                break
            }
            let category = event.category
            let interested: [any Projection]
            if let known = routed[category] {
                interested = known
            } else {
                interested = routes.filter { $0.categories?.contains(category) ?? true }.map(\.projection)
                routed[category] = interested
            }
            if interested.isEmpty {
                prepared.append(PreparedEvent(event: event, work: .pass))
            } else {
                do {
                    let projected = try ProjectedEvent(recorded: event, opener: opener)
                    prepared.append(PreparedEvent(event: event, work: .apply(projected, interested)))
                } catch {
                    prepared.append(PreparedEvent(event: event, work: .poison("cannot read the event: \(error)")))
                    break
                }
            }
            hash = event.hash
        }
        return prepared
    }
}
