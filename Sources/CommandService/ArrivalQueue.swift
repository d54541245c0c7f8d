import Dispatch
import Synchronization

/// What the commands socket's thread hands the writer, in arrival order: a command that
/// passed the gate, or a refusal the gate already wrote. Refusals travel through the
/// queue too, so a pipelined client's replies come back in the order it sent.
enum Arrival: Sendable {
    case command(CommandWriter.Pending)
    case refused(routingId: [UInt8], reply: [UInt8])
}

/// The hand-off between the commands socket's thread and the writer's thread.
///
/// Bounded by its producer: the socket thread stops reading the socket while the queue
/// holds `capacity` arrivals, so a flood backs up into libzmq's high-water marks and TCP,
/// not into memory. Closing it (at shutdown) refuses new arrivals; the writer drains what
/// is left and then learns it is finished.
final class ArrivalQueue: Sendable {
    private struct State {
        var items: [Arrival] = []
        var head = 0
        var isClosed = false
        /// The writer is waiting (or about to) on `wakeup`.
        var consumerWaiting = false

        var count: Int { items.count - head }
    }

    private let state = Mutex(State())
    /// Signalled when the waiting writer has something to take. A spare signal only makes
    /// the writer look once more and find nothing.
    private let wakeup = DispatchSemaphore(value: 0)
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Whether the producer may add more.
    var hasRoom: Bool { state.withLock { $0.count < capacity } }

    /// Adds arrivals in order; false (nothing added) once the queue is closed.
    func offer(_ arrivals: [Arrival]) -> Bool {
        guard !arrivals.isEmpty else { return true }
        let (added, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.isClosed else { return (false, false) }
            state.items.append(contentsOf: arrivals)
            defer { state.consumerWaiting = false }
            return (true, state.consumerWaiting)
        }
        if wake { wakeup.signal() }
        return added
    }

    /// Refuses arrivals from now on; the writer still gets everything offered before.
    func close() {
        let wake = state.withLock { state -> Bool in
            state.isClosed = true
            defer { state.consumerWaiting = false }
            return state.consumerWaiting
        }
        if wake { wakeup.signal() }
    }

    /// Takes up to `limit` arrivals, waiting until `deadline` if there are none.
    /// `finished` is true once the queue is closed and empty: nothing will come again.
    func take(limit: Int, waitingUntil deadline: DispatchTime) -> (arrivals: [Arrival], finished: Bool) {
        while true {
            let taken = state.withLock { state -> (arrivals: [Arrival], finished: Bool)? in
                guard state.count > 0 || state.isClosed else {
                    state.consumerWaiting = true
                    return nil
                }
                return Self.take(&state, limit: limit)
            }
            if let taken { return taken }
            if wakeup.wait(timeout: deadline) == .timedOut {
                return state.withLock { state in
                    state.consumerWaiting = false
                    return Self.take(&state, limit: limit)
                }
            }
        }
    }

    private static func take(_ state: inout State, limit: Int) -> (arrivals: [Arrival], finished: Bool) {
        let end = min(state.items.count, state.head + limit)
        let taken = Array(state.items[state.head..<end])
        state.head = end
        // Reclaim the consumed prefix now and then rather than on every take.
        if state.head == state.items.count {
            state.items.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head > 4096 && state.head * 2 > state.items.count {
            state.items.removeFirst(state.head)
            state.head = 0
        }
        return (taken, state.isClosed && state.count == 0)
    }
}
