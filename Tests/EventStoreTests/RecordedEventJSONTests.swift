import EventStore
import StrataCore
import StrataTesting
import Testing

/// An event read back from the JSON the bus and history carry is the stored event, byte for
/// byte, so a reader can recompute the chain from what it received.
@Suite struct RecordedEventJSONTests {
    @Test func readsBackWhatTheStoreWrites() throws {
        let store = InMemoryEventStore(clock: FixedClock())
        _ = try store.append(
            command(
                "c1",
                [
                    try event("loan-L1", "LoanRequested", ["text": "é \"quoted\" \\ \u{2028}", "n": -5, "list": [true, nil]]),
                    try event("agent-A1", "CommissionEarned", ["nested": ["z": 1, "a": ["b": "c"]]]),
                ], correlationId: "corr-1"))
        let stored = try store.events(after: 0, limit: 10)
        var previous = HashChain.genesisHex
        for original in stored {
            let read = try RecordedEvent(jsonBytes: original.json)
            #expect(read == original)
            #expect(read.continuesChain(from: previous))
            previous = read.hash
        }
        #expect(!stored[1].continuesChain(from: HashChain.genesisHex))
    }

    @Test func refusesWhatIsNotAnEvent() {
        for text in [
            "[]", "{}", #"{"position":1}"#, "not json",
            #"{"data":[],"hash":"h","metadata":{},"position":1,"prevHash":"p","recordedAt":"t","schemaVersion":1,"stream":"s","type":"T","version":1}"#,
            #"{"data":{},"hash":"h","metadata":{},"position":"1","prevHash":"p","recordedAt":"t","schemaVersion":1,"stream":"s","type":"T","version":1}"#,
        ] {
            #expect(throws: EventJSONError.self, "\(text)") { try RecordedEvent(jsonBytes: Array(text.utf8)) }
        }
    }
}
