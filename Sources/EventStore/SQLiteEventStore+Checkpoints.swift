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
        try verify(trustedKey: nil, expected: nil, progress: progress)
    }

    /// Walks the chain and the checkpoints together in position order, in constant memory,
    /// and reports the first problem: two cursors over one read snapshot, merged. Each
    /// event's canonical form is spliced from the stored columns into one reused buffer.
    ///
    /// - Parameters:
    ///   - trustedKey: the Ed25519 public key checkpoints must be signed with; nil checks
    ///     each against the key its row names (the report then says no key was pinned).
    ///   - expected: a (position, hash) known from outside the store.
    ///   - progress: called with the number of events checked, every 8,192.
    public func verify(
        trustedKey: [UInt8]?, expected: ExpectedHash?, progress: ((Int64) -> Void)?
    ) throws(StoreError) -> ChainReport {
        try state.withLock { (state) throws(StoreError) -> ChainReport in
            let c = state.connection
            var verifier = ChainVerifier(trustedKey: trustedKey, expected: expected)
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
                let events = try c.statement("SELECT \(SQLiteEventStore.columns) FROM events ORDER BY position")
                defer { events.reset() }
                var body: [UInt8] = []
                body.reserveCapacity(4096)
                walk: while try events.step() {
                    let position = events.int64(0)
                    body.removeAll(keepingCapacity: true)
                    RecordedEvent.appendEnvelope(
                        to: &body, data: events.unsafeBytes(6), hash: UnsafeRawBufferPointer?.none,
                        metadata: events.unsafeBytes(7), position: position, prevHash: nil,
                        recordedAt: events.unsafeBytes(5), schemaVersion: events.int64(4),
                        stream: events.unsafeBytes(1),
                        type: events.unsafeBytes(3), version: events.int64(2))
                    let intact = body.withUnsafeBytes { canonicalBody in
                        verifier.check(
                            position: position, prevHash: events.unsafeBytes(8), hash: events.unsafeBytes(9),
                            canonicalBody: canonicalBody)
                    }
                    guard intact else { break }
                    while let checkpoint = pending, checkpoint.position <= position {
                        guard verifier.check(checkpoint) else { break walk }
                        pending = try nextCheckpoint()
                    }
                    if let progress, verifier.checked % 8192 == 0 { progress(verifier.checked) }
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
