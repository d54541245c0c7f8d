import Projections
import StrataCore

/// A query's answer and the position of the history it reflects, written as a table for
/// people, RFC 4180 CSV or JSON.
///
/// The rows are written as SQLite steps to them and never held together, so an answer of
/// millions of rows (`query installments --format json` on a large book) takes the memory of
/// one: holding them all took 314 MB for 180,000 installments. A table has to know each
/// column's width before its first line, so it runs the query twice in the same read snapshot:
/// once to measure, once to print.
struct QueryOutput {
    enum Format: String, CaseIterable {
        case table, json, csv
    }

    /// Runs the query, once per call: `columns` with its column names, then `row` for each row
    /// until `row` returns false.
    typealias Rows = (
        _ columns: ([String]) throws -> Void, _ row: ([ProjectionValue]) throws -> Bool
    ) throws -> Void

    /// Takes the next piece of the output; false once nobody reads it any more (`strata query
    /// … | head`), which ends the query there.
    typealias Sink = (String) throws -> Bool

    let rows: Rows
    /// The last event the rows reflect.
    let position: Int64
    /// Where the position comes from, for people: `readmodels at position 1204`.
    let source: String

    init(position: Int64, source: String, rows: @escaping Rows) {
        self.rows = rows
        self.position = position
        self.source = source
    }

    /// Rows already in hand.
    init(columns: [String], rows: [[ProjectionValue]], position: Int64, source: String) {
        self.init(position: position, source: source) { takeColumns, takeRow in
            try takeColumns(columns)
            for row in rows where try !takeRow(row) { return }
        }
    }

    func write(_ format: Format, to sink: Sink) throws {
        switch format {
        case .table: try writeTable(to: sink)
        case .json: try writeJSON(to: sink)
        case .csv: try writeCSV(to: sink)
        }
    }

    /// The whole output as one string (tests, and answers known to be small).
    func rendered(as format: Format) throws -> String {
        var text = ""
        try write(format) { piece in
            text += piece
            return true
        }
        return text
    }

    /// JSON: `{"position":P,"rows":[{column: value, …}, …]}`; integers stay integers
    /// (money in cents), NULL is null. Each row is a canonical object, written as it comes, so
    /// the whole is the canonical form of the answer.
    private func writeJSON(to sink: Sink) throws {
        guard try sink(#"{"position":\#(position),"rows":["#) else { return }
        // Each row is an object in canonical JSON, its keys sorted: the order, and each key as
        // written, are the same for every row, so they are worked out once from the columns.
        // Building a dictionary a row and sorting its keys took most of a large answer's time.
        // A name two columns share keeps the last column, as the object held it once.
        var members: [(key: [UInt8], column: Int)] = []
        var first = true
        try rows({ names in
            var column: [String: Int] = [:]
            for (index, name) in names.enumerated() { column[name] = index }
            members = CanonicalJSON.sortedKeys(column.keys).map { name in
                var key: [UInt8] = []
                CanonicalJSON.appendString(name, to: &key)
                key.append(UInt8(ascii: ":"))
                return (key, column[name]!)
            }
        }) { row in
            var object: [UInt8] = first ? [] : [UInt8(ascii: ",")]
            object.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { object.append(UInt8(ascii: ",")) }
                object.append(contentsOf: member.key)
                CanonicalJSON.append(row[member.column].json, to: &object)
            }
            object.append(UInt8(ascii: "}"))
            first = false
            return try sink(String(decoding: object, as: UTF8.self))
        }
        _ = try sink("]}\n")
    }

    /// RFC 4180: a header line, CRLF line ends, fields quoted when they hold a comma, a
    /// quote, CR or LF (quotes doubled); NULL is an empty field. The position is not part
    /// of CSV: the command states it on stderr.
    ///
    /// Text that a spreadsheet would run as a formula gets a `'` in front (`isFormula`): an
    /// account named `=HYPERLINK(…)` would otherwise run in the analyst's spreadsheet.
    private func writeCSV(to sink: Sink) throws {
        var open = true
        try rows({ open = try sink($0.map(Self.csvField).joined(separator: ",") + "\r\n") }) { row in
            guard open else { return false }
            return try sink(
                row.map { value in
                    guard case .text(let text) = value, Self.isFormula(text) else { return Self.csvField(value.plainText) }
                    return Self.csvField("'" + text)
                }.joined(separator: ",") + "\r\n")
        }
    }

    /// Whether a spreadsheet would read `text` as a formula that can call a function or reach
    /// another cell: it begins with `=`, `@`, a tab or a CR (OWASP's list), or with `+` or `-`
    /// followed by more than a number's characters. A phone number (`+919845012345`, `+91 98450
    /// 12345`) or a plain negative stays as it is: a spreadsheet reads it as a number at worst.
    static func isFormula(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first else { return false }
        switch first {
        case "=", "@", "\t", "\r": return true
        case "+", "-": return !text.unicodeScalars.allSatisfy { numberCharacters.contains($0) }
        default: return false
        }
    }

    private static let numberCharacters = Set("0123456789 .,()+-".unicodeScalars)

    /// Aligned columns for people: amounts in `_cents` columns shown as money under the
    /// column's name without the suffix, numbers right-aligned (a column with an integer and no
    /// text), then a line saying how many rows and which position they reflect.
    private func writeTable(to sink: Sink) throws {
        var header: [String] = []
        var money: [Bool] = []
        var widths: [Int] = []
        var hasText: [Bool] = []
        var hasInteger: [Bool] = []
        var count = 0
        try rows({ columns in
            money = columns.map { $0.hasSuffix("_cents") }
            header = columns.enumerated().map { index, column in
                money[index] ? String(column.dropLast("_cents".count)) : column
            }
            widths = header.map { visible($0).terminalWidth }
            hasText = Array(repeating: false, count: columns.count)
            hasInteger = hasText
        }) { row in
            for (index, value) in row.enumerated() {
                widths[index] = max(widths[index], visible(Self.cell(value, money: money[index])).terminalWidth)
                if case .text = value { hasText[index] = true }
                if case .integer = value { hasInteger[index] = true }
            }
            count += 1
            return true
        }
        if count > 0 {
            let numeric = Set(header.indices.filter { hasInteger[$0] && !hasText[$0] })
            guard try sink(alignedLine(header, widths: widths, rightAligned: numeric)) else { return }
            var open = true
            try rows({ _ in }) { row in
                let cells = row.enumerated().map { index, value in Self.cell(value, money: money[index]) }
                open = try sink(alignedLine(cells, widths: widths, rightAligned: numeric))
                return open
            }
            guard open else { return }
        }
        _ = try sink("(\(count == 1 ? "1 row" : "\(count) rows"); \(source))\n")
    }

    /// A cell as the table shows it: cents as money in a `_cents` column.
    private static func cell(_ value: ProjectionValue, money: Bool) -> String {
        if money, case .integer(let cents) = value { return MoneyText.of(cents) }
        return value.plainText
    }

    /// A CSV field: quoted when it holds a comma, a quote, CR or LF, its quotes doubled (RFC 4180).
    /// Judged by bytes, as a CSV reader splits: a comma or a quote followed by a combining mark
    /// is one `Character` with it, which no longer compared equal to "," or a quote, so the field
    /// went unquoted (or its quote undoubled) and a reader split the row there.
    static func csvField(_ text: String) -> String {
        let comma = UInt8(ascii: ","), quote = UInt8(ascii: "\""), cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
        guard text.utf8.contains(where: { $0 == comma || $0 == quote || $0 == cr || $0 == lf }) else { return text }
        var quoted: [UInt8] = [quote]
        quoted.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            quoted.append(byte)
            if byte == quote { quoted.append(quote) }
        }
        quoted.append(quote)
        return String(decoding: quoted, as: UTF8.self)
    }
}

extension ProjectionValue {
    /// The value as JSON: an integer, a string or null.
    var json: JSONValue {
        switch self {
        case .null: .null
        case .integer(let i): .integer(i)
        case .text(let t): .string(t)
        }
    }

    /// The value as a cell: NULL is empty.
    var plainText: String {
        switch self {
        case .null: ""
        case .integer(let i): String(i)
        case .text(let t): t
        }
    }
}
