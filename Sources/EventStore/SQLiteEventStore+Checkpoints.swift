import Foundation
import StrataCore
import StrataSQLite

/// Signed checkpoints, and the verifier that walks them together with the chain.
extension SQLiteEventStore {
    static let checkpointColumns = "position, hash, signed_at, public_key, signature"

    /// Records a signed checkpoint in its own short transaction, durable (fsynced) when this
    /// returns. Refuses a checkpoint whose signature does not verify or whose hash is not the
    /// stored one at its position: the store signs only what it holds.
    public func appendCheckpoint(_ checkpoint: SignedCheckpoint) throws(StoreError) {
        guard !isReadOnly else { throw StoreError(.readOnly, "\(path) was opened read-only") }
        guard checkpoint.hasValidSignature else {
            throw StoreError(.invalidArgument, "the checkpoint at \(checkpoint.position) does not verify under its key")
        }
        try state.withLock { (state) throws(StoreError) -> Void in
            let c = state.connection
            do throws(SQLiteError) {
                try c.execute("BEGIN IMMEDIATE")
            } catch {
                throw StoreError(error, while: "starting a transaction")
            }
            do throws(StoreError) {
                let stored = try SQLiteEventStore.hash(at: checkpoint.position, in: c)
                guard stored == checkpoint.hash else {
                    throw StoreError(
                        .invalidArgument,
                        "cannot sign \(checkpoint.hash) at \(checkpoint.position): "
                            + "the stored hash there is \(stored ?? "absent")")
                }
                do throws(SQLiteError) {
                    let columns = SQLiteEventStore.checkpointColumns
                    let insert = "INSERT INTO checkpoints (\(columns)) VALUES (?, ?, ?, ?, ?)"
                    try c.statement(insert).run([
                        .integer(checkpoint.position), .text(checkpoint.hash), .text(checkpoint.signedAt),
                        .text(checkpoint.publicKey), .text(checkpoint.signature),
                    ])
                    try c.execute("COMMIT")
                } catch {
                    throw StoreError(error, while: "recording the checkpoint at \(checkpoint.position)")
                }
            } catch {
                if !c.isAutocommit { try? c.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// The checkpoint with the highest position, if any.
    public func lastCheckpoint() throws(StoreError) -> SignedCheckpoint? {
        try readCheckpoints(
            "SELECT \(SQLiteEventStore.checkpointColumns) FROM checkpoints ORDER BY position DESC LIMIT 1", []
        ).first
    }

    /// Checkpoints with position > `position`, in order, at most `limit`: a page of a
    /// table that grows by one row every few seconds for as long as the service runs.
    public func checkpoints(after position: Int64, limit: Int) throws(StoreError) -> [SignedCheckpoint] {
        guard limit > 0 else { throw StoreError(.invalidArgument, "limit must be ≥ 1, got \(limit)") }
        return try readCheckpoints(
            "SELECT \(SQLiteEventStore.checkpointColumns) FROM checkpoints WHERE position > ? "
                + "ORDER BY position LIMIT ?",
            [.integer(position), .integer(Int64(clamping: limit))])
    }

    /// The stored hash at `position`, or nil when there is no such event.
    public func hash(at position: Int64) throws(StoreError) -> String? {
        try state.withLock { (state) throws(StoreError) -> String? in
            try SQLiteEventStore.hash(at: position, in: state.connection)
        }
    }

    public func verify(progress: (@Sendable (Int64) -> Void)?) throws(StoreError) -> ChainReport {
        try verify(trustedKeys: nil, expected: nil, progress: progress)
    }

    /// Events per batch handed to a hashing thread: ≈ 1 MB of copied columns.
    static let verifyBatchEvents = 2048
    /// Batches handed over and not yet checked, at most: two per hashing thread keep each
    /// busy, up to 16 (≈ 20 MB), more than one reading thread can keep ahead of anyway.
    static let verifyBatchesInFlight = 16

    /// Walks the chain and the checkpoints together in position order, in constant memory,
    /// and reports the first problem: two cursors over one read snapshot, merged.
    ///
    /// This thread reads the rows and checks them in position order (positions, links, the
    /// checkpoints at each position); the SHA-256 of each event, most of the work, is computed
    /// by `ChainHashers` threads, one per processor, on batches of rows copied out of SQLite.
    /// Batches are checked in the order they were read, so the first problem named is the
    /// first by position, as in a walk on one thread; a bounded number of batches is in
    /// flight, which keeps memory constant.
    ///
    /// - Parameters:
    ///   - trustedKeys: the Ed25519 public keys checkpoints must be signed with; nil checks
    ///     each against the key its row names (the report then says no key was pinned).
    ///   - expected: a (position, hash) known from outside the store.
    ///   - progress: called with the number of events checked, every 8,192.
    public func verify(
        trustedKeys: TrustedCheckpointKeys?, expected: ExpectedHash?, progress: ((Int64) -> Void)?
    ) throws(StoreError) -> ChainReport {
        try state.withLock { (state) throws(StoreError) -> ChainReport in
            let c = state.connection
            var verifier = ChainVerifier(trustedKeys: trustedKeys, expected: expected)
            let hashers = ChainHashers(threads: ProcessInfo.processInfo.activeProcessorCount)
            defer { hashers.close() }
            do throws(SQLiteError) {
                try c.execute("BEGIN")
                defer { try? c.execute("COMMIT") }
                let checkpointsSQL = "SELECT \(SQLiteEventStore.checkpointColumns) FROM checkpoints ORDER BY position"
                let checkpoints = try SQLiteEventStore.hasCheckpointsTable(c) ? c.statement(checkpointsSQL) : nil
                defer { checkpoints?.reset() }
                func nextCheckpoint() throws(SQLiteError) -> SignedCheckpoint? {
                    guard let checkpoints, try checkpoints.step() else { return nil }
                    return SQLiteEventStore.checkpoint(from: checkpoints)
                }
                var pending = try nextCheckpoint()
                /// Checks a batch's events in order once hashed, each followed by the
                /// checkpoints at or before its position; false once a problem is found.
                func check(_ hashed: ChainHashers.Pending) throws(SQLiteError) -> Bool {
                    let hashes = hashed.hashes()
                    let batch = hashed.batch
                    var failure: SQLiteError?
                    let intact = batch.bytes.withUnsafeBytes { bytes in
                        hashes.hashes.withUnsafeBytes { computed in
                            for event in 0..<batch.count {
                                let position = batch.position(event)
                                if let mistyped = batch.firstMistyped, mistyped.event == event {
                                    return verifier.reject(position: position, because: mistyped.problem)
                                }
                                let hash = UnsafeRawBufferPointer(rebasing: computed[32 * event..<32 * event + 32])
                                // Checked on the hashing thread already, while its bytes were
                                // at hand, unless the batch's first or a bad one.
                                let good =
                                    hashes.linkedAndHashed[event]
                                    ? verifier.checkHashed(position: position, computedHash: hash)
                                    : verifier.check(
                                        position: position, prevHash: batch.field(.prevHash, of: event, in: bytes),
                                        hash: batch.field(.hash, of: event, in: bytes), computedHash: hash)
                                guard good else { return false }
                                while let checkpoint = pending, checkpoint.position <= position {
                                    guard verifier.check(checkpoint) else { return false }
                                    do throws(SQLiteError) {
                                        pending = try nextCheckpoint()
                                    } catch {
                                        failure = error
                                        return false
                                    }
                                }
                            }
                            return true
                        }
                    }
                    if let failure { throw failure }
                    return intact
                }
                let events = try c.statement("SELECT \(SQLiteEventStore.columns) FROM events ORDER BY position")
                defer { events.reset() }
                let size = SQLiteEventStore.verifyBatchEvents
                let limit = min(2 * hashers.threads, SQLiteEventStore.verifyBatchesInFlight)
                var inFlight: [ChainHashers.Pending] = []
                var batch = StoredEventBatch(reservingFor: size)
                var intact = true
                /// Reports each multiple of 8,192 events checked in `before + 1 ... after`. Not
                /// called from `check`: a function holding both `progress` and the statements
                /// would tie the connection to the caller's isolation.
                func report(_ before: Int64, _ after: Int64) {
                    guard let progress else { return }
                    for count in stride(from: (before / 8192 + 1) * 8192, through: after, by: 8192) { progress(count) }
                }
                /// Batches checked, whose buffers the next ones reuse.
                var spares: [StoredEventBatch] = []
                while intact, try events.step() {
                    batch.append(events)
                    guard batch.count == size else { continue }
                    inFlight.append(hashers.submit(batch))
                    batch = spares.popLast() ?? StoredEventBatch(reservingFor: size)
                    batch.removeAll()
                    if inFlight.count > limit {
                        let before = verifier.checked
                        let oldest = inFlight.removeFirst()
                        intact = try check(oldest)
                        spares.append(oldest.batch)
                        report(before, verifier.checked)
                    }
                }
                if intact, batch.count > 0 { inFlight.append(hashers.submit(batch)) }
                while intact, !inFlight.isEmpty {
                    let before = verifier.checked
                    intact = try check(inFlight.removeFirst())
                    report(before, verifier.checked)
                }
                // Signed positions past the last event: the end of the chain was cut off.
                while verifier.problem == nil, let checkpoint = pending {
                    verifier.check(checkpoint)
                    pending = try nextCheckpoint()
                }
            } catch {
                throw StoreError(error, while: "verifying")
            }
            return verifier.report()
        }
    }

    // MARK: - Helpers

    private func readCheckpoints(_ sql: String, _ bindings: [SQLiteValue]) throws(StoreError) -> [SignedCheckpoint] {
        try state.withLock { (state) throws(StoreError) -> [SignedCheckpoint] in
            do throws(SQLiteError) {
                let c = state.connection
                guard try SQLiteEventStore.hasCheckpointsTable(c) else { return [] }
                let s = try c.statement(sql)
                defer { s.reset() }
                try s.bind(bindings)
                var rows: [SignedCheckpoint] = []
                while try s.step() { rows.append(SQLiteEventStore.checkpoint(from: s)) }
                return rows
            } catch {
                throw StoreError(error, while: "reading checkpoints")
            }
        }
    }

    /// A store written before checkpoints existed, opened read-only, has no such table.
    private static func hasCheckpointsTable(_ c: SQLiteConnection) throws(SQLiteError) -> Bool {
        try c.scalarInteger("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'") == 1
    }

    private static func hash(at position: Int64, in c: SQLiteConnection) throws(StoreError) -> String? {
        do throws(SQLiteError) {
            return try c.scalarText("SELECT hash FROM events WHERE position = ?", .integer(position))
        } catch {
            throw StoreError(error, while: "reading the hash at position \(position)")
        }
    }

    private static func checkpoint(from s: SQLiteStatement) -> SignedCheckpoint {
        SignedCheckpoint(
            position: s.int64(0), hash: s.text(1), signedAt: s.text(2), publicKey: s.text(3), signature: s.text(4))
    }
}
