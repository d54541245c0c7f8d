import EventStore

/// `replay --format table`: columns two spaces apart, numbers right-aligned. A history may
/// not fit in memory, so widths come from pages of rows: each page is printed once read,
/// its columns as wide as its widest cell or any earlier page's, so they only ever widen.
struct ReplayTable {
    static let header = ["position", "recorded_at", "stream", "version", "type", "actor"]
    static let rightAligned: Set<Int> = [0, 3]

    let pageSize: Int
    private var rows: [[String]] = [ReplayTable.header]
    private var widths = [Int](repeating: 0, count: ReplayTable.header.count)

    init(pageSize: Int = 1000) {
        self.pageSize = pageSize
    }

    /// Adds an event's row; `emit` gets each line (without its newline) when a page is full.
    mutating func add(_ row: borrowing StoredEventRow, emit: (String) -> Void) {
        let event = row.event
        let actor = (try? event.decodedMetadata().actor) ?? "?"
        let cells = [String(event.position), event.recordedAt, event.stream, String(event.version), event.type, actor]
        add(cells, emit: emit)
    }

    /// Cells are shown `visible`, as in every table the command line prints: replay shows the
    /// stored bytes, and a row changed outside Strata may hold a line break or an escape sequence.
    mutating func add(_ cells: [String], emit: (String) -> Void) {
        rows.append(cells.map(visible))
        if rows.count >= pageSize { flush(emit: emit) }
    }

    /// Prints the rows held (nothing at all, not even the header, when there were no events).
    mutating func flush(emit: (String) -> Void) {
        guard rows.count > 1 || rows.first != ReplayTable.header else { return }
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.terminalWidth) }
        }
        for row in rows {
            var line = ""
            for (index, cell) in row.enumerated() {
                if index > 0 { line += "  " }
                line += cell.padded(to: widths[index], leading: ReplayTable.rightAligned.contains(index))
            }
            while line.last == " " { line.removeLast() }
            emit(line)
        }
        rows.removeAll(keepingCapacity: true)
    }
}
