import Foundation
import StrataCore
import Synchronization

/// Threads that compute the chain hashes of event batches while the verifier reads on.
///
/// SHA-256 is most of a verify's time, on one core, and each event's hash depends only on
/// its own stored columns (its stored `prevHash` among them), so batches hash independently.
/// The verifier takes the results back in the order it handed the batches over and checks
/// them in that order, so what it finds, and the first problem it names, are what a
/// single-threaded walk would find.
final class ChainHashers: Sendable {
    /// A batch handed to the threads, and its hashes once one of them has computed them.
    final class Pending: Sendable {
        let batch: StoredEventBatch
        private let result = OneShot<StoredEventBatch.Hashes>()

        fileprivate init(_ batch: StoredEventBatch) { self.batch = batch }

        fileprivate func finish(_ hashes: StoredEventBatch.Hashes) {
            result.fulfil(hashes)
        }

        /// Waits for the batch's hashes (`StoredEventBatch.chainHashes`).
        func hashes() -> StoredEventBatch.Hashes {
            result.wait()
        }
    }

    let threads: Int
    /// Batches not yet taken by a thread, oldest first. A thread woken to an empty queue
    /// stops: every batch comes with one signal of `work`, and `close` adds one per thread.
    private let queue = Mutex<[Pending]>([])
    private let work = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `threads` hashing threads (at least one).
    init(threads: Int) {
        self.threads = max(1, threads)
        for index in 0..<self.threads {
            startThread(named: "verify-hash-\(index)") { [self] in run() }
        }
    }

    /// Queues `batch` for hashing; the caller keeps the returned handle to collect it.
    func submit(_ batch: StoredEventBatch) -> Pending {
        let pending = Pending(batch)
        queue.withLock { $0.append(pending) }
        work.signal()
        return pending
    }

    /// Drops the batches no thread has started, lets the threads finish the ones they hold,
    /// and returns once every thread has stopped. Call it once, last.
    func close() {
        queue.withLock { $0.removeAll() }
        for _ in 0..<threads { work.signal() }
        for _ in 0..<threads { exited.wait() }
    }

    private func run() {
        while true {
            work.wait()
            guard let pending = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { break }
            pending.finish(pending.batch.chainHashes())
        }
        exited.signal()
    }
}
