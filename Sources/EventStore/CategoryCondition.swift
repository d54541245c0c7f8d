import StrataSQLite

/// The SQL condition that an event's stream is of one of some categories (what comes before its
/// first `-`), for history pages and `replay --category`.
///
/// One range a category (`stream >= 'loan-' AND stream < 'loan.'`) lets the planner walk the
/// (stream, version) index, but joined by `OR` it nests one level a category, and SQLite
/// refuses an expression deeper than 1,000: a history request naming a thousand categories (a
/// thousand times `loan` fits in a body) was answered INTERNAL `STORE_FAILURE`, as if the store
/// had failed, and logged as an error. A balanced tree of ranges would pass that limit but
/// takes the planner seconds for a few thousand. Past a handful of categories the condition is
/// one flat `IN` list of the stream's category instead, whose depth does not grow with it.
enum CategoryCondition {
    /// The most distinct categories given as ranges; more than any reader asks for (the domain
    /// has about a dozen), far fewer than the depth SQLite allows.
    static let mostRanges = 16

    /// The condition on `column` (`stream`, or `+stream` to keep the planner off its index)
    /// and its bindings. Duplicates are dropped: they change nothing but the SQL's size.
    static func sql(_ categories: [String], column: String = "stream") -> (sql: String, bindings: [SQLiteValue]) {
        let distinct = distinct(categories)
        guard distinct.count > mostRanges else {
            // A category's streams sort between "<category>-" and "<category>." ('.' follows '-').
            let ranges = distinct.map { _ in "(\(column) >= ? AND \(column) < ?)" }
            return (
                "(" + ranges.joined(separator: " OR ") + ")",
                distinct.flatMap { [SQLiteValue.text($0 + "-"), .text($0 + ".")] }
            )
        }
        // A stream with no `-` gives the empty text, which is no category.
        let category = "substr(\(column), 1, instr(\(column), '-') - 1)"
        return (
            "\(category) IN (" + distinct.map { _ in "?" }.joined(separator: ", ") + ")",
            distinct.map { .text($0) }
        )
    }

    /// `categories` without duplicates, in their order.
    static func distinct(_ categories: [String]) -> [String] {
        var seen: Set<String> = []
        return categories.filter { seen.insert($0).inserted }
    }

    /// Whether the condition on `stream` is ranges that the (stream, version) index walks.
    static func walksTheIndex(_ categories: [String]) -> Bool {
        distinct(categories).count <= mostRanges
    }
}
