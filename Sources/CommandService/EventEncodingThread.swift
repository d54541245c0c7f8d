import EventStore
import Events
import Foundation
import StrataCore
import Synchronization

/// A thread beside the writer that encodes the events of a batch while the writer decides
/// the rest of it.
///
/// The writer thread bounds the command service's throughput, and writing each new event's
/// canonical JSON was a tenth of its instructions. An event's bytes depend on the event
/// alone, so the writer hands the sealed events over in chunks as it decides them and takes
/// the bytes back, in the same order, before it appends the batch. A failure to encode is
/// the writer's own error again, met when it collects; the batch then fails as before.
final class EventEncodingThread: Sendable {
    /// Events handed over at a time: enough that a batch costs few wake-ups of the thread,
    /// few enough that the thread starts while the writer is still deciding.
    static let chunkSize = 32

    /// Events to encode, and their bytes once the thread has made them.
    final class Chunk: Sendable {
        let events: [(stream: StreamName, event: any DomainEvent)]
        private let result = OneShot<Result<[NewEvent], StoreError>>()

        fileprivate init(_ events: [(stream: StreamName, event: any DomainEvent)]) {
            self.events = events
        }

        /// On the thread.
        fileprivate func encode() {
            var encoded: [NewEvent] = []
            encoded.reserveCapacity(events.count)
            let outcome: Result<[NewEvent], StoreError>
            do throws(StoreError) {
                for (stream, event) in events { encoded.append(try NewEvent(stream: stream, event: event)) }
                outcome = .success(encoded)
            } catch {
                outcome = .failure(error)
            }
            result.fulfil(outcome)
        }

        /// The events' bytes, waiting for the thread if it has not made them yet.
        fileprivate func encoded() throws(StoreError) -> [NewEvent] {
            try result.wait().get()
        }
    }

    /// Chunks not yet taken, oldest first. A wake-up to an empty queue is the stop signal.
    private let queue = Mutex<[Chunk]>([])
    private let work = DispatchSemaphore(value: 0)

    init() {
        startThread(named: "strata-encoder") { [self] in run() }
    }

    /// Ends the thread once the chunks it holds are encoded. Call it once, last.
    func close() {
        work.signal()
    }

    fileprivate func submit(_ events: [(stream: StreamName, event: any DomainEvent)]) -> Chunk {
        let chunk = Chunk(events)
        queue.withLock { $0.append(chunk) }
        work.signal()
        return chunk
    }

    private func run() {
        while true {
            work.wait()
            guard let chunk = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return }
            chunk.encode()
        }
    }
}

/// One batch's events on their way through the thread, in the order they were added.
struct EventEncoding: Sendable {
    private let thread: EventEncodingThread
    private var gathering: [(stream: StreamName, event: any DomainEvent)] = []
    private var chunks: [EventEncodingThread.Chunk] = []
    /// How many events have been added.
    private(set) var count = 0

    init(thread: EventEncodingThread) {
        self.thread = thread
        gathering.reserveCapacity(EventEncodingThread.chunkSize)
    }

    /// Adds an event; its bytes will be at index `count` (before the call) of `finish()`.
    mutating func add(_ event: any DomainEvent, stream: StreamName) {
        gathering.append((stream, event))
        count += 1
        if gathering.count == EventEncodingThread.chunkSize { handOver() }
    }

    /// Every event added, encoded, in order: the first failure, if any, is thrown. The chunks
    /// stay, with the events they were made from, until the encoding is let go.
    mutating func finish() throws(StoreError) -> [NewEvent] {
        handOver()
        var all: [NewEvent] = []
        all.reserveCapacity(count)
        for chunk in chunks { all += try chunk.encoded() }
        return all
    }

    private mutating func handOver() {
        guard !gathering.isEmpty else { return }
        chunks.append(thread.submit(gathering))
        gathering.removeAll(keepingCapacity: true)
    }
}
