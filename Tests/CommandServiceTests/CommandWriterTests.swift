import CommandService
import Domain
import EventStore
import Events
import Foundation
import StrataCore
import StrataTesting
import Testing

private let clock = FixedClock()

/// An agent signs up, is approved, opens an account; then a loan is requested, approved
/// and paid in full — all in one batch, each command seeing the ones before it.
private func lendingBatch() -> [CommandWriter.Pending] {
    [
        pending("c1", actor: "agent-7", .registerUser(RegisterUser(userId: "agent-7", username: "ravi", email: "ravi@example.com", role: .agent))),
        pending("c2", actor: "admin-1", .approveAgent(ApproveAgent(agentId: "agent-7"))),
        pending(
            "c3", actor: "agent-7",
            .openAccount(OpenAccount(accountId: "A1", name: "Lakshmi", phone: "+919845012345", address: "Mysuru", assignedAgentId: "agent-7"))),
        pending(
            "c4", actor: "agent-7",
            .requestLoan(RequestLoan(loanId: "L1", accountId: "A1", principalCents: 1_000_000, monthlyRateBp: 400, tenureMonths: 3, frequency: .monthly))),
        pending("c5", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L1"))),
        pending(
            "c6", actor: "agent-7",
            .receivePayment(ReceivePayment(paymentId: "P1", loanId: "L1", amountCents: 1_081_046, paidOn: LocalDate("2026-11-20")!))),
    ]
}

/// Runs `body` on the in-memory store, then on a SQLite store in a directory removed afterwards
/// (each run of the suite left nine behind).
private func withStores(_ body: (any EventStore) throws -> Void) throws {
    let directory = try ChildProcess.temporaryDirectory("writer")
    defer { try? FileManager.default.removeItem(at: directory) }
    try body(InMemoryEventStore(clock: clock))
    try body(SQLiteEventStore(path: directory.appendingPathComponent("events.db").path, clock: clock))
}

/// Loan L1 rejected by a write straight to the store, which the writer's cache does not see.
private func rejectLoanPastTheWriter(_ store: any EventStore) throws {
    let outsider = LoanRejected(loanId: "L1", rejectedBy: "admin-1", reason: "written elsewhere")
    _ = try store.append(
        CommandWrite(
            commandId: "outside-1", bodyDigest: HashChain.sha256([1]), actor: "admin-1", commandType: "RejectLoan",
            decision: .append([try NewEvent(stream: StreamName("loan-L1")!, event: outsider)], expectations: [:])))
}

private func types(_ reply: CommandReply) -> [String]? {
    guard case .accepted(_, _, let events) = reply else { return nil }
    return events.map(\.type)
}

@Suite("Command writer")
struct CommandWriterTests {
    @Test func aBatchIsDecidedInOrderAndCommittedTogether() throws {
        try withStores { store in
            try bootstrap(store)
            let writer = try CommandWriter(store: store, clock: clock)
            let committed = writer.process(lendingBatch())
            #expect(committed.replies.map { types($0.reply) } == [
                ["UserRegistered"], ["AgentApproved"], ["AccountOpened"], ["LoanRequested"], ["LoanApproved"],
                ["PaymentReceived", "CommissionEarned", "LoanClosed"],
            ])
            #expect(committed.events.map(\.position) == Array(2...9))
            #expect(committed.events == (try store.events(after: 1, limit: 100)))
            let metadata = try committed.events[3].decodedMetadata()
            #expect(metadata.commandId == "c4" && metadata.actor == "agent-7" && metadata.causationId == "c4")
        }
    }

    /// A cache far smaller than what one batch touches: the batch is still decided in order,
    /// each command seeing the uncommitted ones before it, and the next batch folds afresh.
    @Test func aBatchLargerThanTheCacheIsDecidedAgainstItsOwnDecisions() throws {
        try withStores { store in
            try bootstrap(store)
            let writer = try CommandWriter(store: store, clock: clock, cacheCapacity: 2)
            let committed = writer.process(lendingBatch())
            #expect(committed.replies.map { types($0.reply) } == [
                ["UserRegistered"], ["AgentApproved"], ["AccountOpened"], ["LoanRequested"], ["LoanApproved"],
                ["PaymentReceived", "CommissionEarned", "LoanClosed"],
            ])
            // Past capacity now: the next batch starts from state folded from the store.
            let next = writer.process([
                pending(
                    "c7", actor: "agent-7",
                    .requestLoan(
                        RequestLoan(
                            loanId: "L2", accountId: "A1", principalCents: 500_000, monthlyRateBp: 400, tenureMonths: 3,
                            frequency: .monthly))),
                pending("c8", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L2"))),
            ])
            #expect(next.replies.map { types($0.reply) } == [["LoanRequested"], ["LoanApproved"]])
        }
    }

    @Test func retriesAreAnsweredFromTheJournal() throws {
        try withStores { store in
            try bootstrap(store)
            let writer = try CommandWriter(store: store, clock: clock)
            let first = writer.process(lendingBatch())
            let head = try store.head()
            // The whole batch again, plus an id used twice in one batch.
            let again = writer.process(lendingBatch() + [lendingBatch()[0]])
            #expect(try store.head() == head)
            #expect(again.events.isEmpty)
            for (index, reply) in again.replies.enumerated() {
                guard case .accepted(let id, let duplicate, let events) = reply.reply,
                    case .accepted(_, _, let original) = first.replies[index % 6].reply
                else {
                    Issue.record("\(reply.reply)")
                    continue
                }
                #expect(id == first.replies[index % 6].reply.id && duplicate && events == original)
            }
        }
    }

    @Test func refusalsAreJournaledAndAnsweredAsDuplicates() throws {
        try withStores { store in
            try bootstrap(store)
            let writer = try CommandWriter(store: store, clock: clock)
            let refused = pending("c1", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "nope")))
            let invalid = pending("c2", actor: "admin-1", .rejectLoan(RejectLoan(loanId: "L1", reason: " ")))
            let first = writer.process([refused, invalid])
            #expect(first.replies.map(\.reply.code) == ["NOT_FOUND", "INVALID"])
            let again = writer.process([refused, invalid])
            #expect(again.replies.map(\.reply.code) == ["NOT_FOUND", "INVALID"])
            #expect(again.replies.allSatisfy { $0.reply.isDuplicate })
            // The same id with another body is a CONFLICT, and is not journaled over the first.
            let reused = pending("c1", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "other")))
            #expect(writer.process([reused]).replies.map(\.reply.code) == ["CONFLICT"])
            #expect(try store.journalEntry(commandId: "c1")?.outcome == .refused(StrataError(.notFound, reason: "LOAN_NOT_FOUND", "no loan nope")))
        }
    }

    /// A number the payload cannot hold is found in the payload where the command is built,
    /// on the commands thread: INVALID naming its field beside every other problem, and
    /// journaled, so the same body again is a duplicate of that refusal.
    @Test func aNumberThePayloadCannotHoldIsInvalidAndJournaled() throws {
        try withStores { store in
            try bootstrap(store)
            let writer = try CommandWriter(store: store, clock: clock)
            let bytes = Array(
                (#"{"id":"n1","type":"RequestLoan","actor":"admin-1","payload":{"loanId":"L1","accountId":"A1","#
                    + #""principalCents":100000000000000000000,"monthlyRateBp":400.5,"tenureMonths":6e0,"#
                    + #""frequency":"DAILY"}}"#).utf8)
            let body = try CommandBody.parse(bytes).get()
            let sent = CommandWriter.Pending(
                routingId: [1], keyId: "svc", keyRoles: nil, body: body, bodyBytes: bytes, arrivedAt: clock.now(),
                configuration: DomainConfiguration())
            let first = writer.process([sent])
            guard case .refused(let id, false, let error) = first.replies[0].reply else {
                Issue.record("\(first.replies[0].reply)")
                return
            }
            #expect(id == "n1" && error.code == .invalid && error.reason == "ABOVE_MAXIMUM")
            #expect(
                error.details == [
                    .init(field: "principalCents", reason: "ABOVE_MAXIMUM"),
                    .init(field: "monthlyRateBp", reason: "NOT_AN_INTEGER"),
                    .init(field: "tenureMonths", reason: "NOT_AN_INTEGER"),
                    .init(field: "frequency", reason: "UNKNOWN_VALUE"),
                ])
            #expect(try store.journalEntry(commandId: "n1")?.outcome == .refused(error))
            let again = writer.process([sent])
            #expect(again.replies[0].reply.isDuplicate && again.replies[0].reply.code == "INVALID")
            #expect(try store.head() == 1)
        }
    }

    @Test func aNewWriterFoldsStateFromTheStore() throws {
        try withStores { store in
            try bootstrap(store)
            _ = try CommandWriter(store: store, clock: clock).process(Array(lendingBatch().prefix(4)))
            let restarted = try CommandWriter(store: store, clock: clock)
            let next = restarted.process([
                pending("d1", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L1"))),
                pending("d2", actor: "agent-9", .registerUser(RegisterUser(userId: "agent-9", username: "RAVI", email: "x@example.com", role: .agent))),
            ])
            #expect(types(next.replies[0].reply) == ["LoanApproved"])
            #expect(next.replies[1].reply.reason == "USERNAME_TAKEN")
        }
    }

    /// Someone wrote behind the writer's back: its cached versions are stale, the store
    /// refuses with CONFLICT, and the writer folds afresh for the next batch.
    @Test func aStaleCacheIsCaughtByTheStoreAndRebuilt() throws {
        try withStores { store in
            try bootstrap(store)
            let writer = try CommandWriter(store: store, clock: clock)
            _ = writer.process(Array(lendingBatch().prefix(4)))
            try rejectLoanPastTheWriter(store)
            let approve = writer.process([pending("e1", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L1")))])
            #expect(approve.replies[0].reply.reason == "WRONG_EXPECTED_VERSION")
            let retry = writer.process([pending("e2", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L1")))])
            #expect(retry.replies[0].reply.reason == "LOAN_NOT_PENDING")
        }
    }

    /// A batch's events are recorded at the instant it was decided at, so what a decision
    /// writes of its time (an agent's `approvedAt`) is when its events were recorded; and a
    /// clock stepped back, or a writer restarted under one, decides and records at the last
    /// instant, so an approval is never dated before the registration it follows.
    @Test func decisionsAreRecordedAtTheirBatchsInstantWhichNeverGoesBack() throws {
        let storeClock = FixedClock(Timestamp("2026-11-20T10:00:07.000Z")!)
        let writerClock = FixedClock(Timestamp("2026-11-20T10:00:00.000Z")!)
        let directory = try ChildProcess.temporaryDirectory("writer-instants")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("events.db").path
        for store in [InMemoryEventStore(clock: storeClock), try SQLiteEventStore(path: path, clock: storeClock)]
            as [any EventStore]
        {
            writerClock.set(Timestamp("2026-11-20T10:00:00.000Z")!)
            try bootstrap(store)
            let writer = try CommandWriter(store: store, clock: writerClock)
            let together = writer.process(Array(lendingBatch().prefix(2)))
            #expect(together.events.map(\.recordedAt) == ["2026-11-20T10:00:07.000Z", "2026-11-20T10:00:07.000Z"])
            let approved = try #require(together.events.last)
            #expect(try approvedAt(approved) == Timestamp("2026-11-20T10:00:07.000Z")!)

            writerClock.set(Timestamp("2026-11-20T09:00:00.000Z")!)  // stepped back an hour
            let register = pending(
                "c8", actor: "agent-8",
                .registerUser(
                    RegisterUser(userId: "agent-8", username: "mala", email: "mala@example.com", role: .agent)))
            let later = writer.process([register])
            #expect(later.events.map(\.recordedAt) == ["2026-11-20T10:00:07.000Z"])

            let restarted = try CommandWriter(store: store, clock: writerClock)
            let approval = restarted.process([
                pending("c9", actor: "admin-1", .approveAgent(ApproveAgent(agentId: "agent-8")))
            ])
            #expect(approval.events.map(\.recordedAt) == ["2026-11-20T10:00:07.000Z"])
            #expect(try approvedAt(try #require(approval.events.first)) == Timestamp("2026-11-20T10:00:07.000Z")!)
            let times = try store.events(after: 0, limit: 100).map(\.recordedAt)
            #expect(times == times.sorted())
        }
    }

    /// The payload is read as the command arrives, against that moment's date; the decision
    /// is made against the batch's. A loan requested "on the 21st" a millisecond before the
    /// 21st is dated in the future, however late its batch runs.
    @Test func aPayloadIsCheckedAgainstTheDayItArrived() throws {
        let store = InMemoryEventStore(clock: clock)
        try bootstrap(store)
        let writerClock = FixedClock(Timestamp("2026-11-21T00:00:00.002Z")!)
        let writer = try CommandWriter(store: store, clock: writerClock)
        _ = writer.process(Array(lendingBatch().prefix(3)))
        let request = Command.requestLoan(
            RequestLoan(
                loanId: "L1", accountId: "A1", principalCents: 1_000_000, monthlyRateBp: 400, tenureMonths: 3,
                frequency: .monthly, requestedOn: LocalDate("2026-11-21")!))
        let early = writer.process([
            pending("d1", actor: "agent-7", request, arrivedAt: Timestamp("2026-11-20T23:59:59.999Z")!)
        ])
        guard case .refused(_, _, let error) = early.replies[0].reply else {
            Issue.record("accepted: \(early.replies[0].reply)")
            return
        }
        #expect(error.code == .invalid && error.details == [.init(field: "requestedOn", reason: "FUTURE_DATE")])
        #expect(try store.journalEntry(commandId: "d1")?.outcome == .refused(error))
        let inTime = writer.process([
            pending("d2", actor: "agent-7", request, arrivedAt: Timestamp("2026-11-21T00:00:00.001Z")!)
        ])
        #expect(types(inTime.replies[0].reply) == ["LoanRequested"])
    }

    @Test func aFailedCommitAcknowledgesNothing() throws {
        let inner = InMemoryEventStore(clock: clock)
        try bootstrap(inner)
        let failing = UnreliableStore(inner, failingAppendsWith: StoreError(.io, "disk on fire"))
        let writer = try CommandWriter(store: failing, clock: clock)
        let committed = writer.process(lendingBatch())
        #expect(committed.events.isEmpty)
        #expect(committed.replies.map(\.reply.code) == Array(repeating: "INTERNAL", count: 6))
        #expect(try inner.head() == 1)
        #expect(try inner.journalEntry(commandId: "c1") == nil)
    }

    /// A retry of a command journaled before a batch whose commit fails is answered from the
    /// journal, as it would be in a batch that commits: "not recorded" (INTERNAL) would have
    /// its client send it anew under another id, and so apply it twice. Another body under a
    /// journaled id is still a CONFLICT; the same id twice in the failing batch is INTERNAL.
    @Test func aRetryIsAnsweredFromTheJournalWhenItsBatchFailsToCommit() throws {
        let inner = InMemoryEventStore(clock: clock)
        try bootstrap(inner)
        let store = UnreliableStore(inner)
        let writer = try CommandWriter(store: store, clock: clock)
        let first = writer.process(Array(lendingBatch().prefix(3)))
        let accepted = first.replies[0].reply
        let refusedEarlier = pending("r1", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "nope")))
        let refusal = writer.process([refusedEarlier]).replies[0].reply
        store.fail(appends: true, positionReads: false)
        let reused = pending("r1", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "other")))
        let fresh = pending("n1", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L9")))
        let failed = writer.process([fresh, lendingBatch()[0], refusedEarlier, fresh, reused])
        #expect(failed.failure != nil)
        #expect(failed.replies.map(\.reply.code) == ["INTERNAL", nil, "NOT_FOUND", "INTERNAL", "CONFLICT"])
        #expect(failed.replies[1].reply.isDuplicate(of: accepted), "\(failed.replies[1].reply)")
        #expect(failed.replies[2].reply.isDuplicate(of: refusal), "\(failed.replies[2].reply)")
        #expect(failed.replies[4].reply.reason == "COMMAND_ID_REUSED")
        #expect(try inner.journalEntry(commandId: "n1") == nil)
    }

    /// A failed commit whose cache cannot be rebuilt either (the store cannot be read just
    /// then): the cache still holds the failed batch's user, so nothing is decided on it,
    /// and no refusal journaled, until a rebuild succeeds. Deciding on it would have told
    /// the next user, for good, that a username nobody holds was taken.
    @Test func aCacheThatCannotBeRebuiltDecidesNothingUntilItIs() throws {
        let inner = InMemoryEventStore(clock: clock)
        try bootstrap(inner)
        let store = UnreliableStore(inner)
        let writer = try CommandWriter(store: store, clock: clock)
        func register(_ id: String, user: String) -> CommandWriter.Pending {
            pending(
                id, actor: user,
                .registerUser(
                    RegisterUser(
                        userId: user, username: "ravi", email: PersonalData("\(user)@example.com"), role: .agent)))
        }
        store.fail(appends: true, positionReads: true)
        #expect(writer.process([register("u1", user: "agent-7")]).replies.map(\.reply.code) == ["INTERNAL"])
        store.fail(appends: false, positionReads: true)
        #expect(writer.process([register("u2", user: "agent-8")]).replies.map(\.reply.code) == ["INTERNAL"])
        #expect(try inner.journalEntry(commandId: "u2") == nil)
        store.fail(appends: false, positionReads: false)
        #expect(types(writer.process([register("u2", user: "agent-8")]).replies[0].reply) == ["UserRegistered"])
        #expect(writer.process([register("u3", user: "agent-9")]).replies[0].reply.reason == "USERNAME_TAKEN")
    }

    /// A stream that cannot be folded (here loan L2's second event, as a newer version would
    /// write it) refuses the commands that read it, INTERNAL and not journaled, and only them:
    /// the rest of the batch commits, and the same id twice in it is answered alike. Failing
    /// the batch made every command that shared one with such a command INTERNAL, at each of
    /// its retries.
    @Test func aStreamThatCannotBeReadRefusesOnlyTheCommandsThatReadIt() throws {
        try withStores { store in
            try bootstrap(store)
            let request = pending(
                "c7", actor: "agent-7",
                .requestLoan(
                    RequestLoan(
                        loanId: "L2", accountId: "A1", principalCents: 500_000, monthlyRateBp: 400, tenureMonths: 3,
                        frequency: .monthly)))
            _ = try CommandWriter(store: store, clock: clock).process(Array(lendingBatch().prefix(4)) + [request])
            let damaged = try NewEvent(
                stream: StreamName("loan-L2")!, type: "LoanApproved", schemaVersion: 99, data: ["loanId": "L2"])
            _ = try store.append(
                CommandWrite(
                    commandId: "outside-1", bodyDigest: HashChain.sha256([1]), actor: "admin-1",
                    commandType: "ApproveLoan", decision: .append([damaged], expectations: [:])))
            // A writer started on the store as it is now, as `serve` would be.
            let writer = try CommandWriter(store: store, clock: clock)
            let head = try store.head()

            let approveL2 = pending("d1", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L2")))
            let rejectL2 = pending("d2", actor: "admin-1", .rejectLoan(RejectLoan(loanId: "L2", reason: "no")))
            let approveL1 = pending("d3", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L1")))
            let committed = writer.process([approveL2, approveL1, approveL2, rejectL2])
            #expect(committed.failure == nil)
            #expect(committed.replies.map(\.reply.code) == ["INTERNAL", nil, "INTERNAL", "INTERNAL"])
            #expect(committed.replies.map(\.reply.id) == ["d1", "d3", "d1", "d2"])
            #expect(committed.replies[0].reply.reason == "STORE_FAILURE")
            let message = committed.replies[0].reply.message ?? ""
            #expect(message.contains("stream loan-L2 cannot be read"), "\(message)")
            #expect(message.contains("schema version") || message.contains("99"), "\(message)")
            #expect(committed.replies[2].reply.message == message)
            #expect(types(committed.replies[1].reply) == ["LoanApproved"])
            #expect(committed.events.map(\.position) == [head + 1])
            for id in ["d1", "d2"] { #expect(try store.journalEntry(commandId: id) == nil) }
            // Sent again, it is decided afresh, not answered as a duplicate of an INTERNAL.
            let again = writer.process([approveL2])
            #expect(again.replies.map(\.reply.code) == ["INTERNAL"])
            #expect(again.replies[0].reply.isDuplicate == false)
        }
    }

    /// The store refuses one decision of a batch (the cache was stale) and commits the
    /// rest; rebuilding the cache then fails. The batch stays committed: its accepted
    /// command is answered as accepted and its events published, and the cache is rebuilt
    /// before the next batch.
    @Test func aCommittedBatchStaysCommittedWhenTheCacheCannotBeRebuilt() throws {
        let inner = InMemoryEventStore(clock: clock)
        try bootstrap(inner)
        let store = UnreliableStore(inner)
        let writer = try CommandWriter(store: store, clock: clock)
        _ = writer.process(Array(lendingBatch().prefix(4)))
        try rejectLoanPastTheWriter(inner)
        store.fail(appends: false, positionReads: true)
        let approve = pending("e1", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L1")))
        let signUp = pending(
            "e2", actor: "agent-8",
            .registerUser(RegisterUser(userId: "agent-8", username: "asha", email: "asha@example.com", role: .agent)))
        let committed = writer.process([approve, signUp])
        #expect(committed.failure == nil)
        #expect(committed.replies[0].reply.reason == "WRONG_EXPECTED_VERSION")
        #expect(types(committed.replies[1].reply) == ["UserRegistered"])
        #expect(committed.events.map(\.type) == ["UserRegistered"])
        store.fail(appends: false, positionReads: false)
        let next = writer.process([pending("e3", actor: "admin-1", .approveLoan(ApproveLoan(loanId: "L1")))])
        #expect(next.replies[0].reply.reason == "LOAN_NOT_PENDING")
    }
}

extension CommandReply {
    /// Whether this is `original` answered again as a duplicate.
    fileprivate func isDuplicate(of original: CommandReply) -> Bool {
        switch (self, original) {
        case (.accepted(let id, true, let events), .accepted(let originalId, false, let originalEvents)):
            id == originalId && events == originalEvents
        case (.refused(let id, true, let error), .refused(let originalId, false, let originalError)):
            id == originalId && error == originalError
        default: false
        }
    }
    fileprivate var id: String? {
        switch self {
        case .accepted(let id, _, _): id
        case .refused(let id, _, _): id
        }
    }
    fileprivate var code: String? {
        if case .refused(_, _, let error) = self { return error.code.rawValue }
        return nil
    }
    fileprivate var reason: String? {
        if case .refused(_, _, let error) = self { return error.reason }
        return nil
    }
    fileprivate var message: String? {
        if case .refused(_, _, let error) = self { return error.message }
        return nil
    }
    fileprivate var isDuplicate: Bool {
        switch self {
        case .accepted(_, let duplicate, _): duplicate
        case .refused(_, let duplicate, _): duplicate
        }
    }
}

/// The `approvedAt` an `AgentApproved` recorded.
private func approvedAt(_ recorded: RecordedEvent) throws -> Timestamp {
    guard case .agentApproved(let approved) = try recorded.decoded() else {
        throw StoreError(.corrupt, "not an AgentApproved: \(recorded.type)")
    }
    return approved.approvedAt
}
