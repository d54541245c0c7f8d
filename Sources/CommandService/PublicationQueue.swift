import Dispatch
import Synchronization

/// What the writer's thread hands the publisher's thread, in the order it happened.
enum Publication: Sendable {
    /// One turn of the writer: every arrival it took, in order, and what the commands among
    /// them came to (nil when the turn held only refusals the gate had written).
    case turn(Turn)
    /// The writer has answered everything it will ever take, and the store's head is `head`.
    case finished(head: Int64)

    struct Turn: Sendable {
        var arrivals: [Arrival]
        var committed: CommandWriter.Committed?
        /// How long deciding and committing the turn's commands took, for metrics.
        var batchDuration: Duration
        /// Log each command answered INTERNAL as an error: only in the first of a run of
        /// batches the store refused.
        var logFailures: Bool
    }
}

/// The hand-off from the writer's thread to the publisher's, bounded so that a publisher
/// that falls behind holds the writer back rather than letting committed turns pile up.
///
/// The publisher closes it when it ends; from then on `put` refuses at once, so a writer
/// never waits for a publisher that is gone.
final class PublicationQueue: Sendable {
    private struct State {
        /// At most `capacity` of them: taking the first moves only a few.
        var items: [Publication] = []
        var isClosed = false
    }

    private let state = Mutex(State())
    /// One signal per item put.
    private let available = DispatchSemaphore(value: 0)
    /// One signal per free place; a spare one after closing wakes a waiting writer.
    private let room: DispatchSemaphore

    init(capacity: Int) {
        precondition(capacity > 0, "a publication queue needs room for one turn")
        room = DispatchSemaphore(value: capacity)
    }

    /// Adds `publication` once there is room; false (nothing added) once the queue is closed.
    @discardableResult
    func put(_ publication: Publication) -> Bool {
        room.wait()
        let added = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            state.items.append(publication)
            return true
        }
        if added {
            available.signal()
        } else {
            room.signal()  // for the next writer to learn the same
        }
        return added
    }

    /// The next publication, waiting until `deadline`; nil when none came by then.
    func take(waitingUntil deadline: DispatchTime) -> Publication? {
        guard available.wait(timeout: deadline) == .success else { return nil }
        let next = state.withLock { $0.items.removeFirst() }
        room.signal()
        return next
    }

    /// Refuses every later `put`, and wakes a writer waiting for room.
    func close() {
        state.withLock { $0.isClosed = true }
        room.signal()
    }
}
