import Foundation

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
final class ArrivalQueue: @unchecked Sendable {
    // `@unchecked`: every stored property is read and written only with `condition` held.
    private let condition = NSCondition()
    private var items: [Arrival] = []
    private var head = 0
    private var isClosed = false
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Whether the producer may add more.
    var hasRoom: Bool {
        condition.lock()
        defer { condition.unlock() }
        return items.count - head < capacity
    }

    /// Adds arrivals in order; false (nothing added) once the queue is closed.
    func offer(_ arrivals: [Arrival]) -> Bool {
        guard !arrivals.isEmpty else { return true }
        condition.lock()
        defer { condition.unlock() }
        guard !isClosed else { return false }
        items.append(contentsOf: arrivals)
        condition.signal()
        return true
    }

    /// Refuses arrivals from now on; the writer still gets everything offered before.
    func close() {
        condition.lock()
        isClosed = true
        condition.signal()
        condition.unlock()
    }

    /// Takes up to `limit` arrivals, waiting until `deadline` if there are none.
    /// `finished` is true once the queue is closed and empty: nothing will come again.
    func take(limit: Int, waitingUntil deadline: Date) -> (arrivals: [Arrival], finished: Bool) {
        condition.lock()
        defer { condition.unlock() }
        while items.count == head && !isClosed {
            if !condition.wait(until: deadline) { break }
        }
        let end = min(items.count, head + limit)
        let taken = Array(items[head..<end])
        head = end
        // Reclaim the consumed prefix now and then rather than on every take.
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 4096 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return (taken, isClosed && items.count == head)
    }
}
