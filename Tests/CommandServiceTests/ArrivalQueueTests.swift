import Dispatch
import Foundation
import Testing

@testable import CommandService

private func refusal(_ n: UInt8) -> Arrival { .refused(routingId: [n], reply: [n]) }

private func routing(_ arrivals: [Arrival]) -> [UInt8] {
    arrivals.map { arrival in
        guard case .refused(let routingId, _) = arrival else { return 0 }
        return routingId[0]
    }
}

@Suite("Arrival queue")
struct ArrivalQueueTests {
    @Test func takesInArrivalOrderUpToTheLimit() {
        let queue = ArrivalQueue(capacity: 3)
        #expect(queue.offer([refusal(1), refusal(2)]))
        #expect(queue.hasRoom)
        #expect(queue.offer([refusal(3)]))
        #expect(!queue.hasRoom, "the producer stops reading at capacity")
        let first = queue.take(limit: 2, waitingUntil: .now())
        #expect(routing(first.arrivals) == [1, 2])
        #expect(!first.finished)
        #expect(queue.hasRoom)
        #expect(routing(queue.take(limit: 10, waitingUntil: .now()).arrivals) == [3])
    }

    @Test func anEmptyTakeWaitsUntilItsDeadline() {
        let queue = ArrivalQueue(capacity: 10)
        let taken = queue.take(limit: 10, waitingUntil: .now() + .milliseconds(20))
        #expect(taken.arrivals.isEmpty)
        #expect(!taken.finished)
    }

    @Test func anOfferWakesAWaitingWriter() {
        let queue = ArrivalQueue(capacity: 10)
        let started = DispatchTime.now()
        let producer = Thread {
            usleep(20_000)
            _ = queue.offer([refusal(9)])
        }
        producer.start()
        // Far beyond the producer's delay: only the wake-up ends the wait early.
        let taken = queue.take(limit: 10, waitingUntil: .now() + .seconds(30))
        #expect(routing(taken.arrivals) == [9])
        #expect(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds < 10_000_000_000)
    }

    @Test func closingRefusesNewArrivalsButDeliversTheOldOnes() {
        let queue = ArrivalQueue(capacity: 10)
        #expect(queue.offer([refusal(1)]))
        queue.close()
        #expect(!queue.offer([refusal(2)]), "nothing is taken once closed")
        let last = queue.take(limit: 10, waitingUntil: .now() + .seconds(30))
        #expect(routing(last.arrivals) == [1])
        #expect(last.finished, "closed and drained: nothing will come again")
        let after = queue.take(limit: 10, waitingUntil: .now() + .seconds(30))
        #expect(after.arrivals.isEmpty && after.finished, "a closed queue never waits")
    }

    @Test func aLongQueueStaysInOrderAcrossManyTakes() {
        let queue = ArrivalQueue(capacity: 100_000)
        for chunk in 0..<100 {
            #expect(queue.offer((0..<100).map { refusal(UInt8(($0 + chunk * 100) % 251)) }))
        }
        var seen: [UInt8] = []
        while true {
            let taken = queue.take(limit: 333, waitingUntil: .now())
            if taken.arrivals.isEmpty { break }
            seen += routing(taken.arrivals)
        }
        #expect(seen == (0..<10_000).map { UInt8($0 % 251) })
    }
}
