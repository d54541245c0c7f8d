import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing

/// Where the conformance tests' SQLite stores go: one directory for the test process,
/// removed as it exits (the stores are handed out as `any EventStore`, with no teardown).
private let storesDirectory = try! ChildProcess.temporaryDirectory("strata-store")
private let removeStoresAtExit: Void = {
    atexit { try? FileManager.default.removeItem(at: storesDirectory) }
}()

/// Which implementation a conformance test runs against.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case memory

    var testDescription: String { rawValue }

    func make(clock: FixedClock = FixedClock()) throws -> any EventStore {
        switch self {
        case .sqlite:
            _ = removeStoresAtExit
            let path = storesDirectory.appendingPathComponent("events-\(UUID().uuidString).db").path
            return try SQLiteEventStore(path: path, clock: clock)
        case .memory:
            return InMemoryEventStore(clock: clock)
        }
    }
}

func stream(_ raw: String) -> StreamName { StreamName(raw)! }

func event(_ raw: String, _ type: String = "TestHappened", _ data: JSONValue = ["n": 1]) throws -> NewEvent {
    try NewEvent(stream: stream(raw), type: type, schemaVersion: 1, data: data)
}

func digest(_ text: String) -> [UInt8] { HashChain.sha256(Array(text.utf8)) }

/// A command that appends `events`, with its body digest derived from `body`.
func command(
    _ id: String, _ events: [NewEvent], expect expectations: [StreamName: ExpectedVersion] = [:], body: String? = nil,
    actor: String = "user-1", correlationId: String? = nil
) throws -> CommandWrite {
    try CommandWrite(
        commandId: id, bodyDigest: digest(body ?? id), keyId: "svc", actor: actor, commandType: "TestCommand",
        correlationId: correlationId, decision: .append(events, expectations: expectations))
}

func refusal(_ id: String, _ error: StrataError) throws -> CommandWrite {
    try CommandWrite(
        commandId: id, bodyDigest: digest(id), keyId: "svc", actor: "user-1", commandType: "TestCommand",
        decision: .refuse(error))
}

/// The positions of an accepted result; fails the test otherwise.
func acceptedPositions(_ result: CommandResult, sourceLocation: SourceLocation = #_sourceLocation) -> [Int64] {
    guard case .recorded(.accepted(let events)) = result else {
        Issue.record("expected an accepted command, got \(result)", sourceLocation: sourceLocation)
        return []
    }
    return events.map(\.position)
}

/// Every event in the store, in position order.
func allEvents(_ store: any EventStore) throws -> [RecordedEvent] {
    try store.events(after: 0, limit: Int.max)
}

/// Runs a throwing expression and returns the `StoreError` it threw, or records an issue.
func storeError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> StoreError? {
    do {
        try body()
        Issue.record("expected a StoreError, nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as StoreError {
        return error
    } catch {
        Issue.record("expected a StoreError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
