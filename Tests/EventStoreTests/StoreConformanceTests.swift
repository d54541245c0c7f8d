@testable import EventStore
import Events
import Foundation
import StrataCore
import StrataTesting
import Testing

/// The store's guarantees, checked against the SQLite store and its in-memory twin alike.
@Suite("Event store conformance")
struct StoreConformanceTests {
    @Test(arguments: StoreKind.allCases)
    func appendAssignsGaplessPositionsAndStreamVersions(_ kind: StoreKind) throws {
        let store = try kind.make()
        let first = try store.append(command("c1", [event("loan-L1"), event("loan-L1"), event("agent-A1")]))
        #expect(acceptedPositions(first) == [1, 2, 3])
        guard case .recorded(.accepted(let appended)) = first else { return }
        #expect(appended.map(\.stream) == ["loan-L1", "loan-L1", "agent-A1"])
        #expect(appended.map(\.version) == [1, 2, 1])

        let second = try store.append(command("c2", [event("loan-L1")]))
        #expect(acceptedPositions(second) == [4])
        #expect(try store.head() == 4)
        #expect(try store.version(of: stream("loan-L1")) == 3)
        #expect(try store.version(of: stream("agent-A1")) == 1)
        #expect(try store.version(of: stream("loan-NOPE")) == 0)
        #expect(try allEvents(store).map(\.position) == [1, 2, 3, 4])
    }

    /// What the command service publishes: the events of one group commit as stored, in
    /// position order, and none of a refused command, a conflict, a retry or a reused id.
    @Test(arguments: StoreKind.allCases)
    func appendReturningEventsReturnsExactlyWhatWasStored(_ kind: StoreKind) throws {
        let store = try kind.make()
        _ = try store.append(command("seed", [event("loan-L1")]))
        let (results, returned) = try store.appendReturningEvents([
            try command("a", [event("loan-L1"), event("agent-A1", "Other", ["k": "v"])]),
            try refusal("b", StrataError(.rejected, reason: "NO", "refused")),
            try command("c", [event("loan-L9")], expect: [stream("loan-L9"): .exactly(4)]),
            try command("seed", [event("loan-L1")]),
            try command("d", [event("invoice-I1")]),
        ])
        #expect(results.count == 5)
        #expect(returned.map(\.position) == [2, 3, 4])
        #expect(returned == (try store.events(after: 1, limit: 100)))
        let (nothing, none) = try store.appendReturningEvents([try command("d", [event("invoice-I1")])])
        guard case .duplicate = nothing[0] else {
            Issue.record("expected a duplicate, got \(nothing[0])")
            return
        }
        #expect(none.isEmpty)
    }

    /// Events are recorded at the instant the caller decided them, or the store's clock;
    /// never before the last instant recorded, however far the clock or the caller steps
    /// back, so that times never go back along positions (nor along the journal).
    @Test(arguments: StoreKind.allCases)
    func recordedTimesNeverGoBackAlongPositions(_ kind: StoreKind) throws {
        let clock = FixedClock(Timestamp("2026-11-20T10:00:00.000Z")!)
        let store = try kind.make(clock: clock)
        _ = try store.append(command("c1", [event("loan-L1")]))
        clock.set(Timestamp("2026-11-20T09:00:00.000Z")!)  // the wall clock stepped back an hour
        _ = try store.append(command("c2", [event("loan-L2")]))
        let decidedAt = Timestamp("2026-11-20T10:00:05.250Z")!
        _ = try store.appendReturningEvents([try command("c3", [event("loan-L3")])], at: decidedAt)
        _ = try store.appendReturningEvents(
            [try refusal("r4", StrataError(.rejected, reason: "NO", "refused")), try command("c5", [event("loan-L4")])],
            at: Timestamp("2026-11-20T08:00:00.000Z")!)
        #expect(try allEvents(store).map(\.recordedAt) == [
            "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:00.000Z", "2026-11-20T10:00:05.250Z",
            "2026-11-20T10:00:05.250Z",
        ])
        #expect(try store.journalEntry(commandId: "r4")?.recordedAt == "2026-11-20T10:00:05.250Z")
    }

    @Test(arguments: StoreKind.allCases)
    func everyEventIsChainedAndVerifies(_ kind: StoreKind) throws {
        let store = try kind.make()
        for i in 1...20 {
            _ = try store.append(command("c\(i)", [event("loan-L\(i % 3)"), event("agent-A\(i % 2)")]))
        }
        let events = try allEvents(store)
        #expect(events.count == 40)
        #expect(events[0].prevHash == HashChain.genesisHex)
        for (previous, next) in zip(events, events.dropFirst()) {
            #expect(next.prevHash == previous.hash)
        }
        // The hash is SHA-256(prevHash bytes ‖ canonical event without the hashes).
        for e in events {
            let recomputed = HashChain.hash(previous: Hex.decode(e.prevHash)!, canonicalEvent: e.canonicalBody)
            #expect(Hex.encode(recomputed) == e.hash)
        }
        let report = try store.verify()
        #expect(report.isIntact)
        #expect(report.eventsChecked == 40)
        #expect(report.lastGoodHash == events.last!.hash)
    }

    @Test(arguments: StoreKind.allCases)
    func metadataNamesTheCommandActorAndCausation(_ kind: StoreKind) throws {
        let store = try kind.make()
        _ = try store.append(command("cmd-7", [event("loan-L1")], actor: "agent-9", correlationId: "flow-3"))
        let stored = try #require(try allEvents(store).first)
        let metadata = try stored.decodedMetadata()
        #expect(metadata == EventMetadata(commandId: "cmd-7", actor: "agent-9", correlationId: "flow-3", causationId: "cmd-7"))
        #expect(String(decoding: stored.metadata, as: UTF8.self)
            == #"{"actor":"agent-9","causationId":"cmd-7","commandId":"cmd-7","correlationId":"flow-3"}"#)
        #expect(stored.recordedAt == "2026-11-20T10:00:00.000Z")
    }

    @Test(arguments: StoreKind.allCases)
    func aVersionConflictRefusesTheWholeCommandAndWritesNoneOfIt(_ kind: StoreKind) throws {
        let store = try kind.make()
        _ = try store.append(command("seed", [event("loan-L1")]))
        // Touches three streams; the expectation on the second is wrong.
        let result = try store.append(
            command(
                "multi", [event("agent-A1"), event("loan-L1"), event("cashout-C1")],
                expect: [stream("agent-A1"): .exactly(0), stream("loan-L1"): .exactly(0), stream("cashout-C1"): .any]))
        guard case .recorded(.refused(let error)) = result else {
            Issue.record("expected a refusal, got \(result)")
            return
        }
        #expect(error.code == .conflict)
        #expect(error.reason == "WRONG_EXPECTED_VERSION")
        #expect(error.message.contains("loan-L1"))
        #expect(try store.head() == 1)
        #expect(try store.version(of: stream("agent-A1")) == 0)
        #expect(try store.version(of: stream("cashout-C1")) == 0)
        // The refusal itself is journaled: a retry gets it again.
        let entry = try #require(try store.journalEntry(commandId: "multi"))
        #expect(entry.outcome == .refused(error))
        #expect(entry.head == 1)
    }

    /// With several expectations unmet, the refusal names the first stream in name order,
    /// whatever order the command's expectations come in.
    @Test(arguments: StoreKind.allCases)
    func severalUnmetExpectationsAreReportedByTheFirstStreamInNameOrder(_ kind: StoreKind) throws {
        let store = try kind.make()
        let names = ["loan-L5", "agent-A3", "loan-L2", "invoice-I9", "agent-A7", "cashout-C4", "loan-L8", "user-U1"]
        for (n, name) in names.enumerated() {
            _ = try store.append(command("seed-\(n)", [event(name)]))
        }
        var expectations: [StreamName: ExpectedVersion] = [:]
        for name in names { expectations[stream(name)] = .exactly(7) }
        expectations[stream("account-A0")] = .exactly(0)  // met: the stream does not exist
        let result = try store.append(command("all-wrong", [event("loan-L5")], expect: expectations))
        guard case .recorded(.refused(let error)) = result else {
            Issue.record("expected a refusal, got \(result)")
            return
        }
        #expect(error.reason == "WRONG_EXPECTED_VERSION")
        #expect(error.message == "stream agent-A3 is at version 1, the command expected 7")
    }

    @Test(arguments: StoreKind.allCases)
    func aGroupCommitRefusesOnlyTheConflictingCommand(_ kind: StoreKind) throws {
        let store = try kind.make()
        let results = try store.append([
            command("g1", [event("loan-L1")], expect: [stream("loan-L1"): .exactly(0)]),
            // Sees g1's effect: loan-L1 is at version 1 now.
            command("g2", [event("loan-L1")], expect: [stream("loan-L1"): .exactly(1)]),
            // Stale: expects the stream not to exist.
            command("g3", [event("loan-L1"), event("agent-A1")], expect: [stream("loan-L1"): .exactly(0)]),
            command("g4", [event("agent-A1")], expect: [stream("agent-A1"): .exactly(0)]),
            refusal("g5", StrataError(.rejected, reason: "LOAN_NOT_PENDING", "the loan is not pending")),
        ])
        #expect(acceptedPositions(results[0]) == [1])
        #expect(acceptedPositions(results[1]) == [2])
        #expect(results[2].outcome.isConflict)
        #expect(acceptedPositions(results[3]) == [3])
        #expect(results[4] == .recorded(.refused(StrataError(.rejected, reason: "LOAN_NOT_PENDING", "the loan is not pending"))))
        #expect(try allEvents(store).map(\.position) == [1, 2, 3])
        #expect(try store.verify().isIntact)
    }

    @Test(arguments: StoreKind.allCases)
    func aRetryWithTheSameBodyGetsTheOriginalOutcomeAndAppendsNothing(_ kind: StoreKind) throws {
        let store = try kind.make()
        let original = try store.append(command("once", [event("loan-L1"), event("agent-A1")], body: "body-1"))
        let retry = try store.append(command("once", [event("loan-L1"), event("agent-A1")], body: "body-1"))
        guard case .recorded(let outcome) = original, case .duplicate(let entry) = retry else {
            Issue.record("expected recorded then duplicate, got \(original) then \(retry)")
            return
        }
        #expect(entry.outcome == outcome)
        #expect(entry.commandId == "once")
        #expect(entry.bodyDigest == digest("body-1"))
        #expect(entry.actor == "user-1")
        #expect(entry.keyId == "svc")
        #expect(try store.head() == 2)

        // A refused command is decided once too.
        let refused = StrataError(.invalid, reason: "INVALID_FIELDS", "bad", details: [.init(field: "amountCents", reason: "NOT_POSITIVE")])
        _ = try store.append(refusal("no", refused))
        #expect(try store.append(refusal("no", refused)).outcome == .refused(refused))
        if case .duplicate = try store.append(refusal("no", refused)) {} else { Issue.record("expected duplicate") }
        #expect(try store.head() == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func theSameIdWithAnotherBodyIsAConflictAndIsNotJournaled(_ kind: StoreKind) throws {
        let store = try kind.make()
        _ = try store.append(command("id-1", [event("loan-L1")], body: "first"))
        let reuse = try store.append(command("id-1", [event("loan-L2")], body: "second"))
        guard case .idReused(let entry) = reuse else {
            Issue.record("expected idReused, got \(reuse)")
            return
        }
        #expect(entry.bodyDigest == digest("first"))
        #expect(reuse.outcome.isConflict)
        #expect(try store.head() == 1)
        #expect(try store.version(of: stream("loan-L2")) == 0)
        // The journal still holds the first body's digest.
        #expect(try store.journalEntry(commandId: "id-1")?.bodyDigest == digest("first"))

        // The same body from another key is not a retry either.
        let first = try command("id-1", [event("loan-L1")], body: "first")
        let otherKey = try CommandWrite(
            commandId: "id-1", bodyDigest: first.bodyDigest, keyId: "other", actor: first.actor,
            commandType: first.commandType, decision: first.decision)
        guard case .idReused = try store.append(otherKey) else {
            Issue.record("the same body from another key must be refused as a reused id")
            return
        }
        #expect(try store.head() == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func aDuplicateIdInsideOneBatchIsAnsweredAsADuplicate(_ kind: StoreKind) throws {
        let store = try kind.make()
        let results = try store.append([command("twice", [event("loan-L1")]), command("twice", [event("loan-L1")])])
        #expect(acceptedPositions(results[0]) == [1])
        if case .duplicate(let entry) = results[1] {
            #expect(entry.outcome == results[0].outcome)
        } else {
            Issue.record("expected the second to be a duplicate, got \(results[1])")
        }
        #expect(try store.head() == 1)
    }

    /// A command is decided before its id is found in the journal: a retry or a reused id
    /// inside a batch must leave the positions and versions as it found them for the
    /// commands after it.
    @Test(arguments: StoreKind.allCases)
    func aRetryInsideABatchLeavesNoTraceOnTheCommandsAfterIt(_ kind: StoreKind) throws {
        let store = try kind.make()
        _ = try store.append(command("first", [event("loan-L1")], body: "body-1"))
        let results = try store.append([
            command("first", [event("loan-L1"), event("loan-L1"), event("agent-A1")], body: "body-1"),
            command("first", [event("loan-L1"), event("agent-A1")], body: "another body"),
            command("next", [event("loan-L1")], expect: [stream("loan-L1"): .exactly(1)]),
            command("after", [event("agent-A1"), event("loan-L1")], expect: [stream("agent-A1"): .exactly(0)]),
        ])
        guard case .duplicate = results[0], case .idReused = results[1] else {
            Issue.record("expected a duplicate and a reused id, got \(results[0]) and \(results[1])")
            return
        }
        #expect(acceptedPositions(results[2]) == [2])
        #expect(acceptedPositions(results[3]) == [3, 4])
        let events = try allEvents(store)
        #expect(events.map(\.position) == [1, 2, 3, 4])
        #expect(events.map(\.stream) == ["loan-L1", "loan-L1", "agent-A1", "loan-L1"])
        #expect(events.map(\.version) == [1, 2, 1, 3])
        #expect(try store.verify().isIntact)
        // The journal still holds the first outcome under that id.
        #expect(try store.journalEntry(commandId: "first")?.head == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func positionsStayGaplessAcrossManyRandomBatches(_ kind: StoreKind) throws {
        let store = try kind.make()
        var generator = SystemRandomNumberGenerator()
        var expectedCount = 0
        var n = 0
        for _ in 0..<30 {
            var batch: [CommandWrite] = []
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                n += 1
                let events = try (0..<Int.random(in: 1...3, using: &generator)).map { _ in try event("loan-L\(n % 5)") }
                // One in four expects a version it cannot have: refused, writes nothing.
                let stale = Int.random(in: 0..<4, using: &generator) == 0
                batch.append(try command("r\(n)", events, expect: stale ? [stream("loan-L\(n % 5)"): .exactly(10_000)] : [:]))
                if !stale { expectedCount += events.count }
            }
            _ = try store.append(batch)
        }
        let events = try allEvents(store)
        #expect(events.count == expectedCount)
        #expect(events.map(\.position) == Array(1...Int64(expectedCount)))
        for streamName in Set(events.map(\.stream)) {
            #expect(events.filter { $0.stream == streamName }.map(\.version) == Array(1...Int64(events.filter { $0.stream == streamName }.count)))
        }
        #expect(try store.verify().isIntact)
    }

    @Test(arguments: StoreKind.allCases)
    func readsByStreamPositionCategoryAndType(_ kind: StoreKind) throws {
        let store = try kind.make()
        _ = try store.append(command("a", [event("loan-L1", "LoanRequested"), event("loans-X", "Other"), event("loan-L2", "LoanRequested")]))
        _ = try store.append(command("b", [event("loan-L1", "LoanApproved"), event("invoice-I1", "InvoiceCreated")]))
        _ = try store.append(command("c", [event("loan-L1", "PaymentReceived"), event("loan-0a1b-2c", "LoanRequested")]))

        #expect(try store.events(in: stream("loan-L1")).map(\.type) == ["LoanRequested", "LoanApproved", "PaymentReceived"])
        #expect(try store.events(in: stream("loan-L1"), fromVersion: 2, limit: 1).map(\.version) == [2])
        #expect(try store.events(after: 2, limit: 2).map(\.position) == [3, 4])
        #expect(try store.events(after: 7, limit: 10).isEmpty)
        // "loans-X" is not in category "loan": categories match whole words.
        #expect(try store.events(after: 0, limit: 100, filter: .categories(["loan"])).map(\.position) == [1, 3, 4, 6, 7])
        #expect(try store.events(after: 3, limit: 2, filter: .categories(["loan"])).map(\.position) == [4, 6])
        #expect(try store.events(after: 0, limit: 100, filter: .categories(["invoice", "loans"])).map(\.position) == [2, 5])
        #expect(try store.events(after: 0, limit: 100, filter: .types(["LoanRequested"])).map(\.position) == [1, 3, 7])
        #expect(try store.events(after: 0, limit: 100, filter: .types(["InvoiceCreated", "LoanApproved"])).map(\.position) == [4, 5])
        // Several types page in position order across them, a type named twice counting once.
        let types = EventFilter.types(["LoanRequested", "InvoiceCreated", "LoanApproved", "LoanRequested"])
        #expect(try store.events(after: 0, limit: 3, filter: types).map(\.position) == [1, 3, 4])
        #expect(try store.events(after: 4, limit: 3, filter: types).map(\.position) == [5, 7])
        #expect(try store.events(after: 7, limit: 3, filter: types).isEmpty)
        #expect(try allEvents(store).first?.category == "loan")
    }

    @Test(arguments: StoreKind.allCases)
    func theBusFormIsCanonicalJSONThatAnyLanguageCanRechain(_ kind: StoreKind) throws {
        let store = try kind.make()
        _ = try store.append(command("u1", [event("user-U1", "TestHappened", ["name": "Zoë \"Z\" / \u{2028}", "n": 7, "nested": ["b": 1, "a": [true, nil]]])]))
        _ = try store.append(command("u2", [event("loan-L1"), event("loan-L1", "Other", ["x": -9_223_372_036_854_775_808])]))
        let lines = try allEvents(store).map { String(decoding: $0.json, as: UTF8.self) }
        // The contract's recipe, in Python: sha256(prevHash bytes + canonical event without the hashes).
        let script = """
            import hashlib, json, sys
            prev = bytes(32)
            for line in sys.stdin.read().split("\\n"):
                e = json.loads(line)
                assert e["prevHash"] == prev.hex(), ("link", e["position"])
                body = {k: v for k, v in e.items() if k not in ("hash", "prevHash")}
                canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
                h = hashlib.sha256(prev + canon).hexdigest()
                assert h == e["hash"], ("hash", e["position"])
                assert json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False) == line, "not canonical"
                prev = bytes.fromhex(h)
            print("ok")
            """
        let result = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script], stdin: lines.joined(separator: "\n"))
        #expect(result.exitCode == 0, "python rechaining failed: \(result.stderr)")
        #expect(result.stdout.hasPrefix("ok"))
    }

    @Test(arguments: StoreKind.allCases)
    func badInputGetsATypedErrorAndWritesNothing(_ kind: StoreKind) throws {
        let store = try kind.make()
        #expect(storeError { _ = try store.events(after: 0, limit: 0) }?.kind == .invalidArgument)
        #expect(storeError { _ = try store.events(after: 0, limit: 10, filter: .categories([])) }?.kind == .invalidArgument)
        #expect(storeError { _ = try store.events(after: 0, limit: 10, filter: .categories(["Loan"])) }?.kind == .invalidArgument)
        #expect(storeError { _ = try store.events(after: 0, limit: 10, filter: .types(["no spaces"])) }?.kind == .invalidArgument)
        #expect(storeError { _ = try store.events(in: stream("loan-L1"), fromVersion: 1, limit: -1) }?.kind == .invalidArgument)
        #expect(storeError { _ = try NewEvent(stream: stream("loan-L1"), type: "lowercaseStart", schemaVersion: 1, data: [:]) }?.kind == .invalidArgument)
        #expect(storeError { _ = try NewEvent(stream: stream("loan-L1"), type: "Fine", schemaVersion: 0, data: [:]) }?.kind == .invalidArgument)
        #expect(storeError { _ = try NewEvent(stream: stream("loan-L1"), type: "Fine", schemaVersion: 1, data: [1, 2]) }?.kind == .invalidArgument)
        #expect(storeError { _ = try command("", [event("loan-L1")]) }?.kind == .invalidArgument)
        #expect(storeError { _ = try command("has space", [event("loan-L1")]) }?.kind == .invalidArgument)
        #expect(storeError { _ = try command(String(repeating: "x", count: 129), [event("loan-L1")]) }?.kind == .invalidArgument)
        #expect(storeError { _ = try command("empty", []) }?.kind == .invalidArgument)
        #expect(storeError { _ = try command("neg", [event("loan-L1")], expect: [stream("loan-L1"): .exactly(-1)]) }?.kind == .invalidArgument)
        #expect(storeError {
            _ = try CommandWrite(commandId: "d", bodyDigest: [1, 2, 3], actor: "a", commandType: "T", decision: .refuse(StrataError(.invalid, "x")))
        }?.kind == .invalidArgument)
        #expect(storeError {
            _ = try CommandWrite(commandId: "d", bodyDigest: digest("d"), actor: "", commandType: "T", decision: .refuse(StrataError(.invalid, "x")))
        }?.kind == .invalidArgument)
        #expect(try store.append([]) == [])
        #expect(try store.head() == 0)
    }
}

extension CommandOutcome {
    var isConflict: Bool {
        if case .refused(let error) = self { return error.code == .conflict }
        return false
    }
}

/// The hand-written canonical writers of the hot path agree with the general one.
@Suite("Hot-path canonical writers")
struct HotPathCanonicalTests {
    @Test(arguments: [
        EventMetadata(commandId: "c1", actor: "a"),
        EventMetadata(commandId: "c1", actor: "ünïcode \"quoted\"", correlationId: "x"),
        EventMetadata(commandId: "c1", actor: "a", correlationId: "k\n", causationId: "c1"),
        EventMetadata(commandId: "c1", actor: "a", causationId: "cause"),
    ])
    func metadataBytesAreCanonical(_ metadata: EventMetadata) throws {
        #expect(metadata.canonicalBytes == CanonicalJSON.bytes(metadata.json))
        #expect(try CanonicalJSON.decode(EventMetadata.self, from: metadata.canonicalBytes) == metadata)
    }

    @Test func anEventsCategoryIsItsStreamNameUpToTheFirstDash() {
        func category(_ stream: String) -> Substring {
            RecordedEvent(
                position: 1, stream: stream, version: 1, type: "T", schemaVersion: 1, recordedAt: "", data: [],
                metadata: [], prevHash: "", hash: ""
            ).category
        }
        #expect(category("loan-L1") == "loan")
        #expect(category("invoiceseries-INV-2026") == "invoiceseries")
        #expect(category("settings-global") == "settings")
        #expect(category("nodash") == "nodash")
        #expect(category("-x") == "")
        #expect(category("") == "")
    }

    @Test func journalBytesAreCanonicalAndReadBack() throws {
        let outcomes: [CommandOutcome] = [
            .accepted([]),
            .accepted([AppendedEvent(position: 1, stream: "loan-L1", version: 1, type: "LoanRequested")]),
            .accepted([
                AppendedEvent(position: 7, stream: "loan-L1", version: 3, type: "PaymentReceived"),
                AppendedEvent(position: 8, stream: "agent-A1", version: 9, type: "CommissionEarned"),
            ]),
            .refused(StrataError(.invalid, reason: "INVALID_FIELDS", "two problems", details: [.init(field: "a", reason: "B")])),
        ]
        for outcome in outcomes {
            let parsed = try JSONParser.parse(outcome.journalBytes)
            #expect(CanonicalJSON.bytes(parsed) == outcome.journalBytes)
            #expect(CommandOutcome(journalJSON: parsed) == outcome)
        }
    }
}
