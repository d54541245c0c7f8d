import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// RFC 8032's first Ed25519 test vector: seed and public key. libsodium keeps the secret key
/// as seed ‖ public key.
private let rfcSeed = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"
private let rfcPublic = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"

private func rfcKey() throws -> CheckpointKey {
    try CheckpointKey(publicKey: Hex.decode(rfcPublic)!, secretKey: Hex.decode(rfcSeed)! + Hex.decode(rfcPublic)!)
}

/// A checkpoint with one field replaced, as someone editing the row would leave it.
private func edited(
    _ c: SignedCheckpoint, position: Int64? = nil, hash: String? = nil, signedAt: String? = nil,
    publicKey: String? = nil, signature: String? = nil
) -> SignedCheckpoint {
    SignedCheckpoint(
        position: position ?? c.position, hash: hash ?? c.hash, signedAt: signedAt ?? c.signedAt,
        publicKey: publicKey ?? c.publicKey, signature: signature ?? c.signature)
}

@Suite("Signed checkpoints")
struct SignedCheckpointTests {
    let hash = String(repeating: "ab", count: 32)

    @Test func theSignedMessageIsTheDocumentedCanonicalJSON() throws {
        let message = SignedCheckpoint.message(position: 42, hash: hash, signedAt: "2026-11-20T10:00:00.123Z")
        #expect(
            String(decoding: message, as: UTF8.self)
                == #"{"hash":"abababababababababababababababababababababababababababababababab","position":42,"#
                + #""purpose":"strata-checkpoint","signedAt":"2026-11-20T10:00:00.123Z"}"#)
    }

    /// The signature any Ed25519 library makes for that message with RFC 8032's first key
    /// (computed independently with Python's `cryptography`): Ed25519 is deterministic.
    @Test func signingMatchesAnIndependentEd25519() throws {
        let key = try rfcKey()
        #expect(key.publicKeyHex == rfcPublic)
        let checkpoint = key.sign(position: 42, hash: hash, signedAt: "2026-11-20T10:00:00.123Z")
        #expect(
            checkpoint.signature
                == "dfc566fd2e16ccba8a34888773b78d2ca4e1db5a9a6e688cb9a22ba964490aed"
                + "5718cfbba4bd1dc3d1faac19ef9654442832c2c5b1382beae8adba285e3b7205")
        #expect(checkpoint.publicKey == rfcPublic)
        #expect(checkpoint.hasValidSignature)
        #expect(checkpoint.publicKeyBytes == Hex.decode(rfcPublic))
    }

    @Test func anyChangeToASignedRowBreaksItsSignature() throws {
        let key = try rfcKey()
        let good = key.sign(position: 42, hash: hash, signedAt: "2026-11-20T10:00:00.123Z")
        let other = try CheckpointKey.generate()
        var flipped = Array(good.signature.utf8)
        flipped[10] = flipped[10] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        let tampered = [
            edited(good, position: 43), edited(good, hash: String(repeating: "cd", count: 32)),
            edited(good, signedAt: "2026-11-20T10:00:00.124Z"), edited(good, publicKey: other.publicKeyHex),
            edited(good, signature: String(decoding: flipped, as: UTF8.self)),
            // One key, one spelling: upper-case hex is not what was signed or stored.
            edited(good, signature: good.signature.uppercased()),
            edited(good, publicKey: String(rfcPublic.dropLast(2))),
        ]
        for row in tampered {
            #expect(!row.hasValidSignature, "\(row)")
            var verifier = ChainVerifier()
            let passed = verifier.check(row)
            #expect(!passed)
            #expect(verifier.problem?.kind == .badSignature)
            #expect(verifier.problem?.position == row.position)
        }
    }

    @Test func aCheckpointSignedByAnotherKeyIsUntrusted() throws {
        let store = InMemoryEventStore()
        _ = try store.append(command("c1", [event("loan-L1")]))
        let head = try #require(try allEvents(store).last)
        let stranger = try CheckpointKey.generate()
        let checkpoint = stranger.sign(position: 1, hash: head.hash, signedAt: "2026-11-20T10:00:00.000Z")

        var pinned = ChainVerifier(trustedKeys: TrustedCheckpointKeys(try rfcKey().publicKey))
        let headPassed = pinned.check(head)
        let checkpointPassed = pinned.check(checkpoint)
        #expect(headPassed && !checkpointPassed)
        let problem = try #require(pinned.report().problem)
        #expect(problem.kind == .untrustedKey)
        #expect(problem.position == 1)
        #expect(problem.message == "signed by \(stranger.publicKeyHex), not by the trusted key \(rfcPublic)")

        // Not pinned: the signature is checked against the row's own key, and holds.
        var unpinned = ChainVerifier()
        let bothPassed = unpinned.check(head) && unpinned.check(checkpoint)
        #expect(bothPassed)
        let report = unpinned.report()
        #expect(report.isIntact)
        #expect(report.trustedKeys.isEmpty)
        #expect(report.checkpointsChecked == 1)
        #expect(report.lastSignedPosition == 1)
        #expect(report.lastSignedAt == "2026-11-20T10:00:00.000Z")
        #expect(report.unsignedEvents == 0)
    }

    /// After a key is replaced, each trusted key signs until the next one has: an earlier key's
    /// checkpoint after a later key's is not trusted, nor is the later key's own when it alone is
    /// pinned.
    @Test func aReplacedKeyIsTrustedForWhatItSignedBeforeItsSuccessor() throws {
        let store = InMemoryEventStore()
        for index in 1...4 { _ = try store.append(command("c\(index)", [event("loan-L\(index)")])) }
        let events = try allEvents(store)
        let old = try rfcKey()
        let new = try CheckpointKey.generate()
        func signed(_ key: CheckpointKey, at position: Int64) -> SignedCheckpoint {
            key.sign(position: position, hash: events[Int(position) - 1].hash, signedAt: "2026-11-20T10:00:0\(position).000Z")
        }
        func verify(_ trusted: [[UInt8]], _ checkpoints: [SignedCheckpoint]) throws -> ChainReport {
            let keys: TrustedCheckpointKeys = try #require(TrustedCheckpointKeys(keys: trusted))
            var verifier = ChainVerifier(trustedKeys: keys)
            for event in events {
                verifier.check(event)
                for checkpoint in checkpoints where checkpoint.position == event.position { verifier.check(checkpoint) }
            }
            return verifier.report()
        }
        let rotated = [signed(old, at: 1), signed(old, at: 2), signed(new, at: 3), signed(new, at: 4)]

        let both = try verify([old.publicKey, new.publicKey], rotated)
        #expect(both.isIntact && both.checkpointsChecked == 4 && both.lastSignedPosition == 4)
        #expect(both.trustedKeys == [old.publicKeyHex, new.publicKeyHex])

        let backAgain = try verify([old.publicKey, new.publicKey], Array(rotated.prefix(3)) + [signed(old, at: 4)])
        #expect(backAgain.problem?.kind == .untrustedKey && backAgain.problem?.position == 4)
        #expect(
            backAgain.problem?.message
                == "signed by \(old.publicKeyHex), a key replaced by \(new.publicKeyHex), which signed an earlier checkpoint")

        let newAlone = try verify([new.publicKey], rotated)
        #expect(newAlone.problem?.kind == .untrustedKey && newAlone.problem?.position == 1)
        let oldAlone = try verify([old.publicKey], rotated)
        #expect(oldAlone.problem?.kind == .untrustedKey && oldAlone.problem?.position == 3)
        let reversed = try verify([new.publicKey, old.publicKey], rotated)
        #expect(reversed.problem?.kind == .untrustedKey && reversed.problem?.position == 3)
    }

    /// `checkpoint.pub`'s text: a key a line, oldest first; a line that is not a key, or a key
    /// twice, is no list of trusted keys.
    @Test func trustedKeysAreReadALine() throws {
        let other = try CheckpointKey.generate()
        let keys = try #require(TrustedCheckpointKeys(text: "\u{FEFF}\(rfcPublic)\r\n\n\(other.publicKeyHex.uppercased())\n"))
        #expect(keys.keys == [try rfcKey().publicKey, other.publicKey])
        #expect(keys.current == other.publicKey)
        #expect(keys.text == rfcPublic + "\n" + other.publicKeyHex + "\n")
        #expect(TrustedCheckpointKeys(text: rfcPublic + "\nnot a key\n") == nil)
        #expect(TrustedCheckpointKeys(text: rfcPublic + "\n" + rfcPublic + "\n") == nil)
        #expect(TrustedCheckpointKeys(text: "\n") == nil)
    }

    @Test func keyFilesRoundTripAndMalformedOnesAreRefused() throws {
        let key = try CheckpointKey.generate()
        let json = String(decoding: key.json, as: UTF8.self)
        #expect(json == #"{"publicKey":"\#(key.publicKeyHex)","secretKey":"\#(Hex.encode(key.secretKey))"}"# + "\n")
        #expect(try CheckpointKey(json: key.json) == key)
        #expect(!key.description.contains(Hex.encode(key.secretKey)))
        #expect(key.publicKeyLine == key.publicKeyHex + "\n")
        #expect(CheckpointKey.publicKey(fromText: " " + key.publicKeyHex.uppercased() + "\n") == key.publicKey)
        #expect(CheckpointKey.publicKey(fromText: String(key.publicKeyHex.dropLast())) == nil)

        let other = try CheckpointKey.generate()
        let cases: [(String, String)] = [
            ("{", "not valid JSON: UNEXPECTED_END at byte 1"),
            (#"{"secretKey":"\#(Hex.encode(key.secretKey))"}"#, "\"publicKey\" must be 64 lowercase hex characters"),
            (#"{"publicKey":"\#(key.publicKeyHex)"}"#, "\"secretKey\" must be 128 lowercase hex characters"),
            (
                #"{"publicKey":"\#(key.publicKeyHex)","secretKey":"\#(Hex.encode(other.secretKey))"}"#,
                "the secret key does not belong to the public key"
            ),
            (
                #"{"publicKey":"\#(key.publicKeyHex)","secretKey":"\#(Hex.encode(key.secretKey).uppercased())"}"#,
                "\"secretKey\" must be 128 lowercase hex characters"
            ),
        ]
        for (text, message) in cases {
            #expect(throws: CheckpointKeyError(message)) { try CheckpointKey(json: Array(text.utf8)) }
        }
    }
}

/// Tampering with a real store file, written by `SQLiteEventStore` with signed checkpoints
/// at 4 and 8, then changed through a plain read-write SQLite connection.
@Suite("Verifying a store against its signed checkpoints")
final class CheckpointVerificationTests: Sendable {
    let directory: URL
    var path: String { directory.appendingPathComponent("events.db").path }

    init() throws {
        directory = try ChildProcess.temporaryDirectory("strata-checkpoints")
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Ten single-event commands, each `{"amount":i*100,"who":"root"}`, signed at 4 and 8.
    func seed(signedAt positions: [Int64] = [4, 8], key: CheckpointKey) throws {
        let store = try SQLiteEventStore(path: path)
        for i in 1...10 {
            let data: JSONValue = ["amount": .integer(Int64(i) * 100), "who": "root"]
            _ = try store.append(command("c\(i)", [event("loan-L\(i)", "TestHappened", data)]))
            if positions.contains(Int64(i)) {
                let hash = try #require(try store.hash(at: Int64(i)))
                let signedAt = "2026-11-20T10:00:\(i < 10 ? "0" : "")\(i).000Z"
                try store.appendCheckpoint(key.sign(position: Int64(i), hash: hash, signedAt: signedAt))
            }
        }
    }

    func tamper(_ sql: String) throws {
        let c = try SQLiteConnection(path: path, mode: .readWrite)
        try c.execute(sql)
    }

    func verify(trusting key: CheckpointKey?) throws -> ChainReport {
        try SQLiteEventStore(readingAt: path).verify(trustedKeys: key.map { TrustedCheckpointKeys($0.publicKey) }, expected: nil, progress: nil)
    }

    @Test func anIntactStoreReportsItsCheckpointsAndUnsignedTail() throws {
        let key = try rfcKey()
        try seed(key: key)
        let store = try SQLiteEventStore(readingAt: path)
        let report = try verify(trusting: key)
        #expect(report.isIntact)
        #expect(report.eventsChecked == 10)
        #expect(report.checkpointsChecked == 2)
        #expect(report.lastSignedPosition == 8)
        #expect(report.lastSignedAt == "2026-11-20T10:00:08.000Z")
        #expect(report.unsignedEvents == 2)
        #expect(report.trustedKeys == [rfcPublic])
        #expect(try store.lastCheckpoint()?.position == 8)
        #expect(try store.checkpoints(after: 0, limit: 10).map(\.position) == [4, 8])
        #expect(try store.checkpoints(after: 4, limit: 10).map(\.position) == [8])
        #expect(try store.checkpoints(after: 0, limit: 1).map(\.position) == [4])
        // The protocol's verify checks the same, trusting each row's own key.
        let plain = try store.verify()
        #expect(plain.isIntact && plain.checkpointsChecked == 2 && plain.trustedKeys.isEmpty)
    }

    @Test func aChangedByteIsAHashMismatchAtItsPosition() throws {
        try seed(key: try rfcKey())
        try tamper("UPDATE events SET data = replace(data, 'root', 'r00t') WHERE position = 6")
        let report = try verify(trusting: try rfcKey())
        #expect(report.problem?.position == 6)
        #expect(report.problem?.kind == .hashMismatch)
        #expect(report.eventsChecked == 5)
        #expect(report.checkpointsChecked == 1)
        #expect(report.lastSignedPosition == 4)
    }

    @Test func aDeletedEventIsAGapAtItsPosition() throws {
        try seed(key: try rfcKey())
        try tamper("DELETE FROM events WHERE position = 5")
        let report = try verify(trusting: try rfcKey())
        #expect(report.problem?.position == 5)
        #expect(report.problem?.kind == .gap)
        #expect(report.problem?.message == "expected position 5, found 6")
    }

    @Test func reorderedEventsAreCaughtAtTheFirstMovedPosition() throws {
        try seed(key: try rfcKey())
        try tamper(
            """
            UPDATE events SET position = -6 WHERE position = 6;
            UPDATE events SET position = 6 WHERE position = 7;
            UPDATE events SET position = 7 WHERE position = -6;
            """)
        let report = try verify(trusting: try rfcKey())
        #expect(report.problem?.position == 6)
        #expect(report.problem?.kind == .brokenLink)
        #expect(report.lastGoodPosition == 5)
    }

    /// The attack the chain alone cannot see: change event 3 and recompute every hash after
    /// it. The chain is consistent again; only the signature at 4 knows otherwise.
    @Test func aChainRewrittenEndToEndIsCaughtByTheFirstSignedCheckpointAfterIt() throws {
        let key = try rfcKey()
        try seed(key: key)
        try rewriteChain(path, from: 3, data: #"{"amount":999999,"who":"root"}"#)

        var plain = ChainVerifier()
        for event in try allEvents(try SQLiteEventStore(readingAt: path)) { plain.check(event) }
        #expect(plain.report().isIntact, "the chain alone verifies: every hash was recomputed")
        #expect(plain.report().eventsChecked == 10)

        let report = try verify(trusting: key)
        let problem = try #require(report.problem)
        #expect(problem.kind == .checkpointMismatch)
        #expect(problem.position == 4)
        #expect(problem.message.contains("the chain was rewritten at or before this position"))
        #expect(report.checkpointsChecked == 0)
        // No event is vouched for: with no good checkpoint before it, any of 1 to 4 may be rewritten.
        #expect(report.eventsChecked == 0 && report.lastGoodPosition == 0, "\(report)")
        #expect(report.lastGoodHash == HashChain.genesisHex)
    }

    /// Rewritten after a good checkpoint (at 4) and caught by the next (at 8): what is vouched
    /// for ends at the good one, where it said every event up to the one before 8.
    @Test func aChainRewrittenAfterAGoodCheckpointIsVouchedForUpToThatCheckpointOnly() throws {
        let key = try rfcKey()
        try seed(key: key)
        let hashAt4 = try #require(try SQLiteEventStore(readingAt: path).hash(at: 4))
        try rewriteChain(path, from: 6, data: #"{"amount":999999,"who":"root"}"#)
        let report = try verify(trusting: key)
        let problem = try #require(report.problem)
        #expect(problem.kind == .checkpointMismatch && problem.position == 8, "\(problem)")
        #expect(problem.message.contains("the chain was rewritten after the checkpoint at 4"))
        #expect(report.checkpointsChecked == 1 && report.lastSignedPosition == 4)
        #expect(report.eventsChecked == 4 && report.lastGoodPosition == 4 && report.lastGoodHash == hashAt4)
        #expect(report.unsignedEvents == 0)

        // The same from an auditor's own copy of a hash (--expect), without the signatures.
        let store = try SQLiteEventStore(readingAt: path)
        let expected = try store.verify(
            trustedKeys: nil, expected: ExpectedHash(position: 7, hash: String(repeating: "0", count: 64)),
            progress: nil)
        #expect(expected.problem?.kind == .checkpointMismatch && expected.problem?.position == 7)
        #expect(expected.lastGoodPosition == 4 && expected.eventsChecked == 4, "\(expected)")
    }

    @Test func eventsCutFromTheEndLeaveACheckpointBeyondTheHead() throws {
        try seed(key: try rfcKey())
        try tamper("DELETE FROM events WHERE position >= 8")
        let report = try verify(trusting: try rfcKey())
        let problem = try #require(report.problem)
        #expect(problem.kind == .checkpointBeyondHead)
        #expect(problem.position == 8)
        #expect(report.eventsChecked == 7)
        #expect(report.checkpointsChecked == 1)
        #expect(report.lastSignedPosition == 4)
    }

    @Test func aCheckpointRowEditedOrSignedByAnotherKeyIsCaught() throws {
        let key = try rfcKey()
        try seed(key: key)
        try tamper("UPDATE checkpoints SET signed_at = '2026-11-21T00:00:00.000Z' WHERE position = 8")
        #expect(try verify(trusting: key).problem?.kind == .badSignature)
        #expect(try verify(trusting: key).problem?.position == 8)

        // Re-signed by someone else's key: valid on its own, but not by the trusted key.
        let stranger = try CheckpointKey.generate()
        let hashAt8 = try #require(try SQLiteEventStore(readingAt: path).hash(at: 8))
        let resigned = stranger.sign(position: 8, hash: hashAt8, signedAt: "2026-11-21T00:00:00.000Z")
        let c = try SQLiteConnection(path: path, mode: .readWrite)
        try c.statement("UPDATE checkpoints SET signed_at = ?, public_key = ?, signature = ? WHERE position = 8")
            .run([.text(resigned.signedAt), .text(resigned.publicKey), .text(resigned.signature)])
        let report = try verify(trusting: key)
        #expect(report.problem?.kind == .untrustedKey)
        #expect(report.problem?.position == 8)
        #expect(try verify(trusting: nil).isIntact, "not pinned, any valid signature passes")
    }

    @Test func anExpectedHashFromElsewhereIsChecked() throws {
        try seed(key: try rfcKey())
        let store = try SQLiteEventStore(readingAt: path)
        let hashAt6 = try #require(try store.hash(at: 6))
        func verify(_ expected: ExpectedHash) throws -> ChainReport {
            try store.verify(trustedKeys: nil, expected: expected, progress: nil)
        }
        #expect(try verify(ExpectedHash(position: 6, hash: hashAt6)).isIntact)

        let wrong = try verify(ExpectedHash(position: 6, hash: String(repeating: "0", count: 64)))
        #expect(wrong.problem?.kind == .checkpointMismatch)
        #expect(wrong.problem?.position == 6)

        let beyond = try verify(ExpectedHash(position: 11, hash: hashAt6))
        #expect(beyond.problem?.kind == .checkpointBeyondHead)
        #expect(beyond.problem?.position == 11)
    }

    @Test func theStoreSignsOnlyWhatItHolds() throws {
        let key = try rfcKey()
        try seed(signedAt: [], key: key)
        let store = try SQLiteEventStore(path: path)
        let zeros = String(repeating: "0", count: 64)
        let at = "2026-11-20T10:00:00.000Z"
        let wrongHash = key.sign(position: 5, hash: zeros, signedAt: at)
        #expect(storeError { try store.appendCheckpoint(wrongHash) }?.kind == .invalidArgument)
        let noSuchEvent = key.sign(position: 11, hash: zeros, signedAt: at)
        #expect(storeError { try store.appendCheckpoint(noSuchEvent) }?.kind == .invalidArgument)
        let good = key.sign(position: 5, hash: try #require(try store.hash(at: 5)), signedAt: at)
        let forged = edited(good, signature: String(repeating: "0", count: 128))
        #expect(storeError { try store.appendCheckpoint(forged) }?.kind == .invalidArgument)
        try store.appendCheckpoint(good)
        #expect(try store.lastCheckpoint() == good)
        #expect(storeError { try store.appendCheckpoint(good) } != nil, "a position is signed once")
    }

    @Test func aStoreMadeBeforeCheckpointsVerifiesReadOnlyWithNone() throws {
        try seed(signedAt: [], key: try rfcKey())
        try tamper("DROP TABLE checkpoints")
        let store = try SQLiteEventStore(readingAt: path)
        let report = try store.verify(trustedKeys: TrustedCheckpointKeys(try rfcKey().publicKey), expected: nil, progress: nil)
        #expect(report.isIntact)
        #expect(report.checkpointsChecked == 0)
        #expect(report.lastSignedPosition == 0)
        #expect(report.unsignedEvents == 10)
        #expect(try store.lastCheckpoint() == nil)
        // The next writer open adds the table.
        _ = try SQLiteEventStore(path: path)
        let c = try SQLiteConnection(path: path, mode: .readOnly)
        #expect(try c.scalarInteger("SELECT count(*) FROM checkpoints") == 0)
    }

    /// Every event signed: the two cursors stay in step over many rows.
    @Test func everyPositionSignedVerifiesInStep() throws {
        let key = try rfcKey()
        try seed(signedAt: Array(1...10), key: key)
        let report = try verify(trusting: key)
        #expect(report.isIntact)
        #expect(report.checkpointsChecked == 10)
        #expect(report.unsignedEvents == 0)
    }
}

/// Rewrites the chain from `position` on as someone without the signing key would: new
/// `data` at `position`, then every `prev_hash` and `hash` recomputed to the end.
func rewriteChain(_ path: String, from position: Int64, data: String) throws {
    let c = try SQLiteConnection(path: path, mode: .readWrite)
    try c.statement("UPDATE events SET data = ? WHERE position = ?").run([.text(data), .integer(position)])
    let store = try SQLiteEventStore(readingAt: path)
    var previous = HashChain.genesis
    if position > 1 {
        let hex = try #require(try store.hash(at: position - 1))
        previous = try #require(Hex.decode(hex))
    }
    for event in try store.events(after: position - 1, limit: Int.max) {
        let rewritten = RecordedEvent(
            position: event.position, stream: event.stream, version: event.version, type: event.type,
            schemaVersion: event.schemaVersion, recordedAt: event.recordedAt, data: event.data,
            metadata: event.metadata, prevHash: Hex.encode(previous), hash: "")
        let hash = HashChain.hash(previous: previous, canonicalEvent: rewritten.canonicalBody)
        try c.statement("UPDATE events SET prev_hash = ?, hash = ? WHERE position = ?")
            .run([.text(Hex.encode(previous)), .text(Hex.encode(hash)), .integer(event.position)])
        previous = hash
    }
}
