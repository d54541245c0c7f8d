import StrataCore
import StrataSQLite

/// Which events `SQLiteEventStore.forEachEvent` streams: every condition set must hold.
///
/// Each condition becomes SQL, so rows that do not match are never copied out of SQLite.
/// Bounds are inclusive: `from...to` on positions, `since...until` on `recorded_at` (to the
/// millisecond, the resolution the store records).
public struct ReplayFilter: Sendable, Equatable {
    /// The first position (0 and 1 both mean the start).
    public var from: Int64
    /// The last position; nil for the head at the start of the read.
    public var to: Int64?
    public var stream: StreamName?
    /// Stream categories; empty for any.
    public var categories: [String]
    /// Event types; empty for any.
    public var types: [String]
    /// `metadata.actor`, exactly.
    public var actor: String?
    public var since: Timestamp?
    public var until: Timestamp?

    public init(
        from: Int64 = 0, to: Int64? = nil, stream: StreamName? = nil, categories: [String] = [], types: [String] = [],
        actor: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil
    ) {
        self.from = from
        self.to = to
        self.stream = stream
        self.categories = categories
        self.types = types
        self.actor = actor
        self.since = since
        self.until = until
    }

    /// Refuses bounds that cannot hold anything and names that cannot be categories or types.
    /// A well-formed type or category that no event has is not refused: it matches nothing.
    public func validate() throws(StoreError) {
        guard from >= 0 else { throw StoreError(.invalidArgument, "the first position must be ≥ 0, got \(from)") }
        if let to {
            guard to >= 0 else { throw StoreError(.invalidArgument, "the last position must be ≥ 0, got \(to)") }
            guard from <= to else {
                throw StoreError(.invalidArgument, "the first position (\(from)) is after the last (\(to))")
            }
        }
        for category in categories where !StreamName.isValidCategory(category) {
            throw StoreError(.invalidArgument, "'\(category)' is not a category (1–32 lowercase letters)")
        }
        for type in types where !NewEvent.isValidType(type) {
            throw StoreError(
                .invalidArgument, "'\(type)' is not an event type (ASCII letters and digits, from a capital)")
        }
        if let actor, actor.isEmpty || actor.utf8.count > 128 {
            throw StoreError(.invalidArgument, "an actor is 1–128 bytes")
        }
        for time in [since, until].compactMap({ $0 }) where !Timestamp.isStorable(time) {
            throw StoreError(.invalidArgument, "\(time.millisecondsSinceEpoch) ms is outside the years 0001–9999")
        }
        if let since, let until, since > until {
            throw StoreError(.invalidArgument, "the earliest time (\(since)) is after the latest (\(until))")
        }
    }

    /// Whether only positions are bounded: then every position in range matches (positions
    /// have no gaps), so the number of matches is known before reading.
    public var boundsPositionsOnly: Bool {
        stream == nil && categories.isEmpty && types.isEmpty && actor == nil && since == nil && until == nil
    }

    // MARK: - SQL

    /// The query and its bindings, in position order up to `head`.
    ///
    /// The access path is chosen here rather than left to the planner, so that no plan ever
    /// sorts (a sort would read every match before the first comes out, in memory that grows
    /// with history): one stream walks the (stream, version) index, in version order, which is
    /// its position order; one type walks the (type, position) index; anything else scans the
    /// table by position. A leading `+` keeps SQLite from using an index on that column.
    func query(head: Int64) -> (sql: String, bindings: [SQLiteValue]) {
        var conditions: [String] = []
        var bindings: [SQLiteValue] = []
        let last = min(to ?? head, head)
        let order: String
        if let stream {
            conditions.append("stream = ?")
            bindings.append(.text(stream.description))
            conditions.append("+position BETWEEN ? AND ?")
            order = "version"
        } else if types.count == 1 {
            conditions.append("type = ?")
            bindings.append(.text(types[0]))
            conditions.append("position BETWEEN ? AND ?")
            order = "position"
        } else {
            conditions.append("position BETWEEN ? AND ?")
            order = "position"
        }
        bindings += [.integer(from), .integer(last)]
        if !(stream == nil && types.count == 1), !types.isEmpty {
            conditions.append("+type IN (" + types.map { _ in "?" }.joined(separator: ", ") + ")")
            bindings += types.map { .text($0) }
        }
        if !categories.isEmpty {
            let condition = CategoryCondition.sql(categories, column: "+stream")
            conditions.append(condition.sql)
            bindings += condition.bindings
        }
        if let actor {
            // Stored metadata is canonical JSON whose first key is always "actor", followed by
            // commandId: its text starts with {"actor":"<actor>", exactly when the actor matches.
            // A range on that prefix is a byte comparison, with no JSON parsed per row.
            var prefix = Array(#"{"actor":"#.utf8)
            CanonicalJSON.appendString(actor, to: &prefix)
            prefix.append(UInt8(ascii: ","))
            var next = prefix
            next[next.count - 1] += 1
            conditions.append("metadata >= ? AND metadata < ?")
            bindings += [.text(String(decoding: prefix, as: UTF8.self)), .text(String(decoding: next, as: UTF8.self))]
        }
        // recorded_at is fixed-width RFC 3339 UTC with milliseconds, so text order is time order.
        if let since {
            conditions.append("recorded_at >= ?")
            bindings.append(.text(since.description))
        }
        if let until {
            conditions.append("recorded_at <= ?")
            bindings.append(.text(until.description))
        }
        let sql =
            "SELECT \(SQLiteEventStore.columns) FROM events WHERE " + conditions.joined(separator: " AND ")
            + " ORDER BY \(order)"
        return (sql, bindings)
    }
}
