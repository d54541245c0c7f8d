import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// `verify` hashes batches of 2,048 events on other threads and checks them back in order:
/// on stores of a few batches, what it reports (the first problem above all) is what a
/// single-threaded walk over the same rows reports, wherever a tampering falls in a batch.
@Suite("Verifying across hashing threads")
final class ParallelVerifyTests: Sendable {
    let directory: URL
    var path: String { directory.appendingPathComponent("events.db").path }

    init() throws {
        directory = try ChildProcess.temporaryDirectory("strata-parallel-verify")
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// `count` one-event commands, 100 per call, event i carrying `{"i":i,"who":"root"}`;
    /// checkpoints signed with `key` at `signedAt`.
    func seed(_ count: Int, key: CheckpointKey? = nil, signedAt: [Int64] = []) throws {
        let store = try SQLiteEventStore(path: path)
        for first in stride(from: 1, through: count, by: 100) {
            let commands = try (first...min(first + 99, count)).map { i in
                try command(
                    "c\(i)", [event("loan-L\(i % 50)", "TestHappened", ["who": "root", "i": .integer(Int64(i))])])
            }
            _ = try store.append(commands)
        }
        for position in signedAt {
            let hash = try #require(try store.hash(at: position))
            let signedAt = "2026-11-20T10:00:00.000Z"
            try store.appendCheckpoint(try #require(key).sign(position: position, hash: hash, signedAt: signedAt))
        }
    }

    func tamper(_ sql: String) throws {
        let c = try SQLiteConnection(path: path, mode: .readWrite)
        try c.execute(sql)
    }

    /// What the single-threaded `ChainVerifier` finds feeding it every event, then each
    /// checkpoint after the event at its position: the walk `verify` did before its threads.
    func reference(trustedKeys: TrustedCheckpointKeys? = nil, expected: ExpectedHash? = nil) throws -> ChainReport {
        let store = try SQLiteEventStore(readingAt: path)
        var verifier = ChainVerifier(trustedKeys: trustedKeys, expected: expected)
        var checkpoints = try store.checkpoints(after: 0, limit: 1000)[...]
        walk: for event in try store.events(after: 0, limit: Int.max) {
            guard verifier.check(event) else { break }
            while let checkpoint = checkpoints.first, checkpoint.position <= event.position {
                guard verifier.check(checkpoint) else { break walk }
                checkpoints.removeFirst()
            }
        }
        while verifier.problem == nil, let checkpoint = checkpoints.popFirst() { verifier.check(checkpoint) }
        return verifier.report()
    }

    func verify(trustedKeys: TrustedCheckpointKeys? = nil, expected: ExpectedHash? = nil) throws -> ChainReport {
        try SQLiteEventStore(readingAt: path).verify(trustedKeys: trustedKeys, expected: expected, progress: nil)
    }

    @Test func anIntactStoreOfSeveralBatchesIsIntactWithItsHeadHashAndProgress() throws {
        try seed(9000)
        var progress: [Int64] = []
        let report = try SQLiteEventStore(readingAt: path).verify(
            trustedKeys: nil, expected: nil, progress: { progress.append($0) })
        #expect(report.isIntact)
        #expect(report.eventsChecked == 9000)
        #expect(report.lastGoodPosition == 9000)
        #expect(report.lastGoodHash == (try SQLiteEventStore(readingAt: path).hash(at: 9000)))
        #expect(progress == [8192])
        #expect(report == (try reference()))
    }

    /// Batches are 1–2048, 2049–4096, 4097–5000: tamperings in one batch, in two, on a
    /// batch's first event (whose link reaches into the batch before) and on its last.
    @Test(arguments: [
        (["UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 3000",
          "UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 4500"], Int64(3000),
         ChainProblem.Kind.hashMismatch),
        (["UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 4999",
          "UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 100"], 100, .hashMismatch),
        (["UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position IN (3001, 3000)"], 3000,
         .hashMismatch),
        (["UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position IN (2049, 4097)"], 2049,
         .hashMismatch),
        (["UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 2048"], 2048, .hashMismatch),
        (["UPDATE events SET prev_hash = (SELECT hash FROM events WHERE position = 1) WHERE position = 2049",
          "UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 4000"], 2049, .brokenLink),
        (["UPDATE events SET prev_hash = (SELECT hash FROM events WHERE position = 1) WHERE position = 3000"], 3000,
         .brokenLink),
        (["UPDATE events SET hash = '00' || substr(hash, 3) WHERE position = 3000"], 3000, .hashMismatch),
        // The same hash in capitals is not the stored form: the check is byte for byte.
        (["UPDATE events SET hash = upper(hash) WHERE position = 3000",
          "UPDATE events SET prev_hash = upper(prev_hash) WHERE position = 3001"], 3000, .hashMismatch),
        (["DELETE FROM events WHERE position = 2049"], 2049, .gap),
        (["DELETE FROM events WHERE position = 3000",
          "UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 2500"], 2500, .hashMismatch),
    ])
    func theFirstProblemByPositionIsReported(
        _ tamperings: [String], _ position: Int64, _ kind: ChainProblem.Kind
    ) throws {
        try seed(5000)
        for sql in tamperings { try tamper(sql) }
        let report = try verify()
        #expect(report.problem?.position == position)
        #expect(report.problem?.kind == kind)
        #expect(report.eventsChecked == position - 1)
        #expect(report.lastGoodPosition == position - 1)
        #expect(report.lastGoodHash == (try SQLiteEventStore(readingAt: path).hash(at: position - 1)))
        #expect(report == (try reference()))
    }

    /// A row whose column holds another storage class hashes as before through the typed
    /// reads: caught at its position as the first of a batch, inside one, or after a batch
    /// with another problem further on.
    @Test(arguments: [Int64(2049), 3000, 4999])
    func aColumnOfAnotherStorageClassIsAMismatchWhereverItFalls(_ position: Int64) throws {
        try seed(5000)
        try tamper("UPDATE events SET version = version + 0.5 WHERE position = \(position)")
        try tamper("UPDATE events SET stream = CAST(stream AS BLOB) WHERE position = 5000")
        let report = try verify()
        #expect(report.problem?.position == position)
        #expect(report.problem?.kind == .hashMismatch)
        #expect(report.problem?.message.contains("version holds a REAL") == true, "\(String(describing: report))")
        #expect(report.eventsChecked == position - 1)
        #expect(report.lastGoodHash == (try SQLiteEventStore(readingAt: path).hash(at: position - 1)))
    }

    /// An event given another `prevHash` and the hash that goes with it: each event's own
    /// hash holds, so only the link to the event before it (in the same batch or the one
    /// before) shows the rewrite.
    @Test(arguments: [Int64(3000), 2049])
    func aRelinkedEventWithItsHashRecomputedIsABrokenLink(_ position: Int64) throws {
        try seed(5000)
        let store = try SQLiteEventStore(readingAt: path)
        let victim = try #require(try store.events(after: position - 1, limit: 1).first)
        let otherHash = try #require(try store.hash(at: 1))
        let hash = HashChain.hash(previous: try #require(Hex.decode(otherHash)), canonicalEvent: victim.canonicalBody)
        let c = try SQLiteConnection(path: path, mode: .readWrite)
        try c.statement("UPDATE events SET prev_hash = ?, hash = ? WHERE position = ?")
            .run([.text(otherHash), .text(Hex.encode(hash)), .integer(position)])
        let report = try verify()
        #expect(report.problem?.position == position)
        #expect(report.problem?.kind == .brokenLink)
        #expect(report == (try reference()))
    }

    @Test func anExpectedHashInsideABatchIsChecked() throws {
        try seed(5000)
        let hash = try #require(try SQLiteEventStore(readingAt: path).hash(at: 3000))
        let good = try verify(expected: ExpectedHash(position: 3000, hash: hash))
        #expect(good.isIntact && good.eventsChecked == 5000)
        let wrong = ExpectedHash(position: 3000, hash: String(repeating: "0", count: 64))
        let bad = try verify(expected: wrong)
        #expect(bad.problem?.position == 3000)
        #expect(bad.problem?.kind == .checkpointMismatch)
        #expect(bad == (try reference(expected: wrong)))
    }

    @Test func checkpointsInsideBatchesAreCheckedInOrderWithTheEvents() throws {
        let key = try CheckpointKey.generate()
        try seed(5000, key: key, signedAt: [1000, 3000, 4097])
        let intact = try verify(trustedKeys: TrustedCheckpointKeys(key.publicKey))
        #expect(intact.isIntact && intact.checkpointsChecked == 3 && intact.lastSignedPosition == 4097)
        #expect(intact == (try reference(trustedKeys: TrustedCheckpointKeys(key.publicKey))))

        // A bad signature at 4097 comes before a changed event at 4500, after one at 3000.
        try tamper("UPDATE checkpoints SET signed_at = '2026-11-21T00:00:00.000Z' WHERE position = 4097")
        try tamper("UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 4500")
        let signature = try verify(trustedKeys: TrustedCheckpointKeys(key.publicKey))
        #expect(signature.problem?.position == 4097)
        #expect(signature.problem?.kind == .badSignature)
        #expect(signature == (try reference(trustedKeys: TrustedCheckpointKeys(key.publicKey))))

        try tamper("UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 3000")
        let changed = try verify(trustedKeys: TrustedCheckpointKeys(key.publicKey))
        #expect(changed.problem?.position == 3000)
        #expect(changed.problem?.kind == .hashMismatch)
        #expect(changed.checkpointsChecked == 1)
        #expect(changed == (try reference(trustedKeys: TrustedCheckpointKeys(key.publicKey))))
    }
}
