import StrataSQLite

/// History pages of some stream categories.
///
/// No index holds a category's events in position order: the (stream, version) index finds
/// them stream by stream. Left to itself, SQLite either gathered and sorted every later event
/// of the category for each page (its plan for a limit written in the SQL), or walked the
/// table by position until the page filled (its plan for a bound limit, the one history ran).
/// The walk reads every later event of every category: a client following a category of few
/// events, asking from its last one, read the whole history since then at each request, 0.04 s
/// over 160,000 events and 0.18 s over 640,000, however little was new.
///
/// So a page walks a window of the table first, which a dense category fills and a request
/// near the head ends; then, when the window held less than an eighth of the page and the
/// category has at most `smallCategory` events in all, it takes the rest from the index, whose
/// entries are small, sorting only their positions. Otherwise it walks on, as before; a
/// category found larger is remembered, as categories only grow.
extension SQLiteEventStore {
    /// Rows walked by position before the category's index is asked (a millisecond or two).
    static let categoryWindow: Int64 = 4096
    /// The most events a category may hold for its index entries to be read whole for a page.
    static let smallCategory = 65_536

    private static let eventAt = SQLiteStatementKey("SELECT \(columns) FROM events WHERE position = ?")

    func events(after given: Int64, limit: Int, categories: [String]) throws(StoreError) -> [RecordedEvent] {
        // Nothing is before the first position; from below it, the window's arithmetic overflowed.
        let position = max(given, 0)
        let walked = CategoryCondition.sql(categories, column: "+stream")
        let distinct = CategoryCondition.distinct(categories).sorted()
        return try readingTogether { () throws(StoreError) -> [RecordedEvent] in
            let head = try readHead()
            guard position < head else { return [] }
            let window = head - position > Self.categoryWindow ? position + Self.categoryWindow : head
            var events = try walk(after: position, through: window, limit: limit, walked)
            guard events.count < limit, window < head else { return events }
            // A category that filled an eighth of the page in the window is walked on: reading
            // its index whole for each page would cost more than the walk.
            if events.count * 8 < limit, CategoryCondition.walksTheIndex(categories),
                !state.withLock({ $0.largeCategories.contains(distinct) })
            {
                if let positions = try positions(of: categories, most: Self.smallCategory) {
                    for next in positions.filter({ $0 > window }).sorted().prefix(limit - events.count) {
                        events += try read { (c) throws(SQLiteError) in
                            let s = try c.statement(Self.eventAt)
                            try s.bind(next, at: 1)
                            return s
                        }
                    }
                    return events
                }
                state.withLock { state in
                    if state.largeCategories.count >= 64 { state.largeCategories.removeAll() }
                    state.largeCategories.insert(distinct)
                }
            }
            return events + (try walk(after: window, through: head, limit: limit - events.count, walked))
        }
    }

    /// The head as the read transaction sees it.
    private func readHead() throws(StoreError) -> Int64 {
        try state.withLock { (state) throws(StoreError) -> Int64 in
            do throws(SQLiteError) {
                return try state.connection.scalarInteger("SELECT max(position) FROM events") ?? 0
            } catch {
                throw StoreError(error, while: "reading the head")
            }
        }
    }

    /// The events of the categories in `(after, last]`, walking the table by position.
    private func walk(
        after: Int64, through last: Int64, limit: Int, _ condition: (sql: String, bindings: [SQLiteValue])
    ) throws(StoreError) -> [RecordedEvent] {
        try read(
            "SELECT \(SQLiteEventStore.columns) FROM events WHERE position BETWEEN ? AND ? AND \(condition.sql) "
                + "ORDER BY position LIMIT ?",
            [.integer(after + 1), .integer(last)] + condition.bindings + [.integer(Int64(clamping: limit))])
    }

    /// Every position of the categories' events, from the (stream, version) index alone; nil
    /// when they hold more than `most`, having read `most` + 1 entries.
    private func positions(of categories: [String], most: Int) throws(StoreError) -> [Int64]? {
        let condition = CategoryCondition.sql(categories)
        return try state.withLock { (state) throws(StoreError) -> [Int64]? in
            do throws(SQLiteError) {
                let s = try state.connection.statement(
                    "SELECT position FROM events WHERE \(condition.sql) LIMIT ?")
                defer { s.reset() }
                try s.bind(condition.bindings + [.integer(Int64(most) + 1)])
                var positions: [Int64] = []
                while try s.step() { positions.append(s.int64(0)) }
                return positions.count > most ? nil : positions
            } catch {
                throw StoreError(error, while: "reading events")
            }
        }
    }
}
