import EventStore
import Events
import StrataCore
import Testing

@testable import CommandService

/// A type no canonical writer takes: its floating-point field is refused.
private struct Measured: DomainEvent {
    static let eventType = "Measured"
    static let schemaVersion = 1
    var reading: Double
}

/// The writer hands a batch's events to the encoding thread in chunks and takes the bytes
/// back: in the order it added them, each as it would have encoded it itself, and the first
/// failure as its own error.
@Suite struct EventEncodingThreadTests {
    private func events(_ count: Int) -> [(stream: StreamName, event: any DomainEvent)] {
        (0..<count).map { n in
            let stream = StreamName(category: "user", id: "u\(n)")!
            if n % 3 == 0 {
                return (stream, AgentRejected(agentId: "u\(n)", rejectedBy: "admin-1", reason: "reason \(n) \"quoted\""))
            }
            return (
                stream,
                AgentApproved(
                    agentId: "u\(n)", approvedBy: "admin-1",
                    approvedAt: Timestamp(millisecondsSinceEpoch: 1_790_000_000_000 + Int64(n))))
        }
    }

    @Test(arguments: [0, 1, 31, 32, 33, 64, 100])
    func everyEventComesBackInOrderAsEncodedDirectly(_ count: Int) throws {
        let thread = EventEncodingThread()
        defer { thread.close() }
        var encoding = EventEncoding(thread: thread)
        let added = events(count)
        for (stream, event) in added { encoding.add(event, stream: stream) }
        #expect(encoding.count == count)
        var expected: [NewEvent] = []
        for (stream, event) in added { expected.append(try NewEvent(stream: stream, event: event)) }
        #expect(try encoding.finish() == expected)
    }

    @Test func theFirstFailureInOrderIsThrown() throws {
        let thread = EventEncodingThread()
        defer { thread.close() }
        var encoding = EventEncoding(thread: thread)
        let measuring = StreamName(category: "user", id: "meter")!
        // Three refusals, told apart by their readings (the error names the value).
        for (index, (stream, event)) in events(100).enumerated() {
            if index == 40 { encoding.add(Measured(reading: 0.5), stream: measuring) }
            if index == 70 { encoding.add(Measured(reading: 1.5), stream: measuring) }
            encoding.add(event, stream: stream)
        }
        encoding.add(Measured(reading: 2.5), stream: measuring)
        let expected: StoreError
        do throws(StoreError) {
            _ = try NewEvent(stream: measuring, event: Measured(reading: 0.5))
            Issue.record("a floating-point field was encoded")
            return
        } catch {
            expected = error
        }
        #expect(throws: expected) { try encoding.finish() }
    }
}
