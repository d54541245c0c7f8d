import Dispatch
import Foundation
import Synchronization
import StrataCore
import Testing

@testable import CommandService

/// A turn that carries only the gate's refusal `n`, told apart by its routing id.
private func turn(_ n: UInt8) -> Publication {
    .turn(
        .init(
            arrivals: [.refused(routingId: [n], reply: [n])], committed: nil, batchDuration: .zero,
            logFailures: false))
}

/// Which turn a publication is (its routing id), or 0 for `.finished`.
private func number(_ publication: Publication?) -> UInt8? {
    switch publication {
    case .turn(let turn)?:
        guard case .refused(let routingId, _) = turn.arrivals[0] else { return nil }
        return routingId[0]
    case .finished?: return 0
    case nil: return nil
    }
}

@Suite("Publication queue")
struct PublicationQueueTests {
    @Test func turnsComeOutInTheOrderTheyWentIn() {
        let queue = PublicationQueue(capacity: 3)
        #expect(queue.put(turn(1)))
        #expect(queue.put(turn(2)))
        #expect(queue.put(.finished(head: 7)))
        #expect(number(queue.take(waitingUntil: .now())) == 1)
        #expect(number(queue.take(waitingUntil: .now())) == 2)
        guard case .finished(let head)? = queue.take(waitingUntil: .now()) else {
            Issue.record("the writer's end comes last")
            return
        }
        #expect(head == 7)
        #expect(number(queue.take(waitingUntil: .now() + .milliseconds(20))) == nil, "empty: the wait times out")
    }

    /// Many turns through a queue of two, the writer always ahead: every one arrives, in order,
    /// and the writer never has more than two waiting.
    @Test func aFullQueueHoldsTheWriterBackUntilTheNextTake() {
        let queue = PublicationQueue(capacity: 2)
        let put = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        startThread(named: "test-writer") {
            for n in 1...200 {
                #expect(queue.put(turn(UInt8(n))))
                put.add(1, ordering: .sequentiallyConsistent)
            }
            done.signal()
        }
        var seen: [UInt8] = []
        while seen.count < 200 {
            guard let next = number(queue.take(waitingUntil: .now() + .seconds(30))) else { break }
            // What the writer put is at most what was taken, plus the two places and its next.
            #expect(put.load(ordering: .sequentiallyConsistent) <= seen.count + 3)
            seen.append(next)
        }
        #expect(seen == (1...200).map { UInt8($0) })
        #expect(done.wait(timeout: .now() + 30) == .success)
    }

    /// A publisher that ends closes the queue: the writer waiting for room is let go at once,
    /// and every later put is refused, so a writer never waits for a publisher that is gone.
    @Test func closingLetsAWaitingWriterGoAndRefusesTheRest() {
        let queue = PublicationQueue(capacity: 1)
        #expect(queue.put(turn(1)))
        let refused = DispatchSemaphore(value: 0)
        startThread(named: "test-writer") {
            if !queue.put(turn(2)) { refused.signal() }
        }
        #expect(refused.wait(timeout: .now() + .milliseconds(50)) == .timedOut, "full: the writer waits")
        queue.close()
        #expect(refused.wait(timeout: .now() + 30) == .success)
        #expect(!queue.put(turn(3)))
        #expect(!queue.put(.finished(head: 0)))
    }
}
