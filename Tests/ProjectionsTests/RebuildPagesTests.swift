import EventStore
import Events
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// A rebuild reads, checks and decodes the next page on another thread while it writes
/// the current one, and lets each written page go on that thread too. However history is
/// cut into pages, the rebuilt file must be the live one, row for row.
@Suite struct RebuildPagesTests {
    private typealias F = LendingFixtures

    /// History handed out from the events recorded, a page at a time.
    struct Recorded: HistorySource, Sendable {
        let events: [RecordedEvent]

        func page(after position: Int64, limit: Int) throws(HistoryError) -> HistoryPage {
            HistoryPage(
                events: Array(events.drop { $0.position <= position }.prefix(limit)), head: events.last?.position ?? 0)
        }
    }

    @Test(arguments: [1, 7, 128, 100_000])
    func aRebuildInPagesOfAnySizeEqualsTheLiveFile(pageSize: Int) throws {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        try h.given(F.agentRegistered("agent-1", username: "ravi"), stream: "user-agent-1", actor: "agent-1")
        try h.given(F.agentApproved("agent-1"), stream: "user-agent-1")
        for n in 1...30 {
            let (account, loan) = ("A\(n)", "L\(n)")
            try h.given(F.accountOpened(account), stream: "account-\(account)", actor: "agent-1")
            try h.given(F.loanRequested(loan, account: account), stream: "loan-\(loan)", actor: "agent-1")
            try h.given(F.loanApproved(loan), stream: "loan-\(loan)")
            try h.given(F.partialPayment(loan, id: "P\(n)a"), stream: "loan-\(loan)", actor: "agent-1")
            if n % 3 != 0 {
                try h.given(F.fullPayment(loan, id: "P\(n)b"), stream: "loan-\(loan)", actor: "agent-1")
                try h.given(F.loanClosed(loan), stream: "loan-\(loan)")
            }
        }
        let output = h.directory.appendingPathComponent("rebuilt-\(pageSize).db").path
        let result = try Rebuild.run(
            name: "readmodels", projections: ReadModels.all, from: Recorded(events: h.recorded), into: output,
            pageSize: pageSize)
        #expect(result.stop == nil)
        #expect(result.events == Int64(h.recorded.count))
        let live = try #require(try ProjectionSnapshot(path: h.database.path))
        let comparison = try live.compare(with: output)
        #expect(comparison.difference == nil)
        #expect(comparison.rows > 200)
    }

    /// A live file stopped at a poison event equals a rebuild up to the event before it: the
    /// stop it records is the live file's state, not part of its read models.
    @Test func aStoppedLiveFileEqualsARebuildUpToItsCheckpoint() throws {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        try h.given(F.agentRegistered("agent-1", username: "ravi"), stream: "user-agent-1", actor: "agent-1")
        try h.given(F.agentApproved("agent-1"), stream: "user-agent-1")
        // An event whose bytes changed after it was recorded: the chain breaks, the live file stops.
        let third = try h.record(F.loanRequested("L1", account: "A1"), stream: "loan-L1", actor: "agent-1")
        let altered = RecordedEvent(
            position: third.position, stream: third.stream, version: third.version, type: third.type,
            schemaVersion: third.schemaVersion, recordedAt: third.recordedAt, data: third.data,
            metadata: Array(#"{"actor":"someone-else","commandId":"cmd-3"}"#.utf8), prevHash: third.prevHash,
            hash: third.hash)
        try h.database.apply([altered])
        #expect(h.database.stop?.position == 3)

        let live = try #require(try ProjectionSnapshot(path: h.database.path))
        let output = h.directory.appendingPathComponent("rebuilt.db").path
        let result = try Rebuild.run(
            name: "readmodels", projections: ReadModels.all, from: Recorded(events: h.recorded), into: output,
            upTo: live.checkpoint)
        #expect(result.stop == nil && result.position == 2)
        let comparison = try live.compare(with: output)
        #expect(comparison.difference == nil, "\(comparison.difference ?? "")")
    }

    /// Text that reads the same but is stored in other bytes (NFC "José" against NFD, an "e"
    /// and a combining acute accent) is a difference: the files are compared as SQLite holds
    /// them, not as Swift's strings, which count canonically equivalent text as equal.
    @Test func textInAnotherUnicodeNormalizationIsADifference() throws {
        let h = try ProjectionHarness(ReadModels.all, name: "readmodels")
        try h.given(F.agentRegistered("agent-1", username: "ravi"), stream: "user-agent-1", actor: "agent-1")
        try h.given(F.agentApproved("agent-1"), stream: "user-agent-1")
        try h.given(F.accountOpened("A1", name: "Jos\u{E9}"), stream: "account-A1", actor: "agent-1")
        let output = h.directory.appendingPathComponent("rebuilt.db").path
        _ = try Rebuild.run(
            name: "readmodels", projections: ReadModels.all, from: Recorded(events: h.recorded), into: output)
        let live = try #require(try ProjectionSnapshot(path: h.database.path))
        #expect(try live.compare(with: output).difference == nil)

        let decomposed = "Jose\u{301}"
        #expect(decomposed == "Jos\u{E9}" && Array(decomposed.utf8) != Array("Jos\u{E9}".utf8))
        let rebuilt = try SQLiteConnection(path: output, mode: .readWrite)
        try rebuilt.statement("UPDATE accounts SET name = ? WHERE account_id = 'A1'").run([.text(decomposed)])
        #expect(rebuilt.changes == 1)
        let difference = try #require(try live.compare(with: output).difference)
        #expect(difference.contains("table accounts"), "\(difference)")
    }
}
