import EventStore
import Events
import Projections

/// An event made ready for the file: its place in the chain checked and its data decoded
/// for the projections that read it, all without touching the file.
struct PreparedEvent: Sendable {
    enum Work: Sendable {
        /// Skipped by an operator, or read by none of the file's projections.
        case pass
        /// Boxed (`indirect`): the writer then reads the event where the box holds it, where
        /// an unboxed one was copied out (a retain of every string in it) to be applied.
        indirect case apply(ProjectedEvent, [any Projection])
        /// It stops the projection, for this reason.
        case poison(String)
        /// It does not continue the chain (this is why): it stops the projection, and no
        /// operator may pass over it (`ProjectionStop.Kind.brokenChain`).
        case brokenChain(String)
        /// Its personal data cannot be opened for want of a readable key store: nothing from it
        /// on can be applied, yet the event may be fine, so it is no poison event.
        case keyStoreUnreadable(String)
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
    /// result ends early at the first poison event, broken chain or key store failure, since
    /// nothing after it is applied.
    /// `checkingInHalves` checks the chain of the second half on another thread meanwhile
    /// (for when preparing, not writing, is what a rebuild waits for); the result is the same.
    func prepare(
        _ events: some Collection<RecordedEvent>, after hash: String, checkingInHalves: Bool = false
    ) -> [PreparedEvent] {
        let chain = checkingInHalves ? checkChainInHalves(Array(events), after: hash) : checkChain(events, after: hash)
        var routed: [Substring: [any Projection]] = [:]
        var prepared: [PreparedEvent] = []
        prepared.reserveCapacity(chain.linked + 1)
        // Decoded in order, on this thread alone: opening personal data follows the erasures
        // before it (`ProjectedEvent(recorded:opener:)`).
        for event in events.prefix(chain.linked) {
            if !skipped.isEmpty, skipped.contains(event.position) {
                prepared.append(PreparedEvent(event: event, work: .pass))
                continue
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
                    let work: PreparedEvent.Work =
                        error.isKeyStoreFailure
                        ? .keyStoreUnreadable(error.description) : .poison("cannot read the event: \(error)")
                    prepared.append(PreparedEvent(event: event, work: work))
                    return prepared
                }
            }
        }
        if let broken = chain.broken {
            prepared.append(PreparedEvent(event: broken.event, work: .brokenChain(broken.reason)))
        }
        return prepared
    }

    /// How many of `events`, from the first, continue the chain after `hash` (each event's
    /// `prevHash` the hash before it, its `hash` recomputing from its contents; a skipped
    /// event's hash taken as it is), and the first that does not, with why.
    struct ChainCheck {
        var linked: Int
        var broken: (event: RecordedEvent, reason: String)?
    }

    func checkChain(_ events: some Collection<RecordedEvent>, after hash: String) -> ChainCheck {
        var hash = hash
        var linked = 0
        var follower = ChainFollower()
        for event in events {
            if skipped.isEmpty || !skipped.contains(event.position) {
                guard follower.links(event, after: hash) else {
                    let broken = ProjectionStop.Kind.brokenChainWords
                    let reason =
                        event.prevHash == hash
                        ? "\(broken): hash \(event.hash) does not match the event's contents"
                        : "\(broken): prevHash \(event.prevHash) is not the hash of position \(event.position - 1) "
                            + "(\(hash))"
                    return ChainCheck(linked: linked, broken: (event, reason))
                }
            }
            hash = event.hash
            linked += 1
        }
        return ChainCheck(linked: linked, broken: nil)
    }

    /// `checkChain`, the second half on another thread. That half is checked after the
    /// stored hash of the first half's last event, which counts only once the first half
    /// has checked out whole; otherwise the first half's answer is the answer.
    func checkChainInHalves(_ events: [RecordedEvent], after hash: String) -> ChainCheck {
        let half = events.count / 2
        guard half >= 64 else { return checkChain(events, after: hash) }
        let middle = events[half - 1].hash
        let second = events[half...]
        let checkingSecond = Background { [self] in checkChain(second, after: middle) }
        let first = checkChain(events[..<half], after: hash)
        let rest = checkingSecond.result()
        guard first.linked == half else { return first }
        return ChainCheck(linked: half + rest.linked, broken: rest.broken)
    }
}
