import Foundation
import StrataCore
import Synchronization

/// A thread beside the store's writer that hashes the chain while the writer decides,
/// journals and writes.
///
/// SHA-256 of every event is about a third of an append's instructions, and each hash
/// needs only the hash before it and the event's own canonical body. So for a large append
/// the writer submits each event as it numbers it and goes on with the next commands;
/// this thread hashes behind it, and the writer collects the links when it inserts the
/// events. One thread serves one store for its lifetime: appends are serialised by the
/// store, so at most one job is current (an abandoned one, after a failed append, is
/// finished and dropped).
final class ChainHashingThread: Sendable {
    /// The links are published in groups of this many, so the writer can start inserting
    /// before the whole append is hashed, without a lock round trip per event.
    static let publishEvery = 8

    /// One append's chain: the events not yet hashed and the links made so far.
    final class Job: Sendable {
        private struct State {
            var previous: [UInt8]
            var waiting: [NumberedEvent] = []
            var links: [ChainLink] = []
            /// Queued on the thread or being hashed: later bodies need no further wake-up.
            var scheduled = false
            /// The link the writer is blocked on, if it is.
            var awaited: Int?
        }

        private let state: Mutex<State>
        private let ready = DispatchSemaphore(value: 0)

        fileprivate init(after previous: [UInt8]) {
            state = Mutex(State(previous: previous))
        }

        /// Queues an event; true when the job must be scheduled on the thread.
        fileprivate func submit(_ event: NumberedEvent) -> Bool {
            state.withLock { state in
                state.waiting.append(event)
                if state.scheduled { return false }
                state.scheduled = true
                return true
            }
        }

        /// The `index`-th link, blocking until the thread has made it.
        fileprivate func link(_ index: Int) -> ChainLink {
            while true {
                let made = state.withLock { state -> ChainLink? in
                    if index < state.links.count { return state.links[index] }
                    state.awaited = index
                    return nil
                }
                if let made { return made }
                ready.wait()
            }
        }

        /// On the thread: hashes whatever is waiting until nothing is.
        fileprivate func hashWaiting() {
            while true {
                let next = state.withLock { state -> (events: [NumberedEvent], previous: [UInt8])? in
                    guard !state.waiting.isEmpty else {
                        state.scheduled = false
                        return nil
                    }
                    defer { state.waiting = [] }
                    return (state.waiting, state.previous)
                }
                guard let (events, start) = next else { return }
                var previous = start
                var made: [ChainLink] = []
                made.reserveCapacity(ChainHashingThread.publishEvery)
                for (index, event) in events.enumerated() {
                    let link = ChainLink(of: event, after: previous)
                    made.append(link)
                    previous = link.hash
                    if made.count == ChainHashingThread.publishEvery || index == events.count - 1 {
                        publish(made, previous: previous)
                        made.removeAll(keepingCapacity: true)
                    }
                }
            }
        }

        private func publish(_ made: [ChainLink], previous: [UInt8]) {
            let wake = state.withLock { state -> Bool in
                state.links += made
                state.previous = previous
                guard let awaited = state.awaited, awaited < state.links.count else { return false }
                state.awaited = nil
                return true
            }
            if wake { ready.signal() }
        }
    }

    /// Jobs scheduled and not yet taken, oldest first.
    private let inbox = Mutex<[Job]>([])
    /// One signal per scheduled job, and one to stop.
    private let work = DispatchSemaphore(value: 0)

    init() {
        startThread(named: "strata-chain") { [self] in run() }
    }

    /// A chain for one append, continuing after the event whose hash is `previous`.
    func chain(after previous: [UInt8]) -> Chain {
        Chain(thread: self, job: Job(after: previous))
    }

    /// Ends the thread once the jobs it holds are done. Call it once, last.
    func close() {
        work.signal()
    }

    private func schedule(_ job: Job) {
        inbox.withLock { $0.append(job) }
        work.signal()
    }

    private func run() {
        while true {
            work.wait()
            let next = inbox.withLock { jobs -> Job? in jobs.isEmpty ? nil : jobs.removeFirst() }
            guard let job = next else { return }  // the stop signal: every job signals once
            job.hashWaiting()
        }
    }

    /// `ChainLinking` through the thread.
    struct Chain: ChainLinking {
        let thread: ChainHashingThread
        let job: Job

        mutating func submit(_ event: NumberedEvent) {
            if job.submit(event) { thread.schedule(job) }
        }

        mutating func link(_ index: Int) -> ChainLink { job.link(index) }
    }
}
