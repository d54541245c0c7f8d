import Projections
import StrataCore

/// A query's answer and the position of the history it reflects, written as a table for
/// people, RFC 4180 CSV or JSON.
struct QueryOutput {
    enum Format: String, CaseIterable {
        case table, json, csv
    }

    let columns: [String]
    let rows: [[ProjectionValue]]
    /// The last event the rows reflect.
    let position: Int64
    /// Where the position comes from, for people: `readmodels at position 1204`.
    let source: String

    /// JSON: `{"position":P,"rows":[{column: value, …}, …]}`; integers stay integers
    /// (money in cents), NULL is null.
    var json: String {
        let objects: [JSONValue] = rows.map { row in
            var object: [String: JSONValue] = [:]
            for (column, value) in zip(columns, row) { object[column] = value.json }
            return .object(object)
        }
        return CanonicalJSON.string(.object(["position": .integer(position), "rows": .array(objects)])) + "\n"
    }

    /// RFC 4180: a header line, CRLF line ends, fields quoted when they hold a comma, a
    /// quote, CR or LF (quotes doubled); NULL is an empty field. The position is not part
    /// of CSV: the command states it on stderr.
    ///
    /// Text that a spreadsheet would run as a formula gets a `'` in front (`isFormula`): an
    /// account named `=HYPERLINK(…)` would otherwise run in the analyst's spreadsheet.
    var csv: String {
        var out = columns.map(Self.csvField).joined(separator: ",") + "\r\n"
        for row in rows {
            out += row.map { value in
                guard case .text(let text) = value, Self.isFormula(text) else { return Self.csvField(value.plainText) }
                return Self.csvField("'" + text)
            }.joined(separator: ",") + "\r\n"
        }
        return out
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
    /// column's name without the suffix, numbers right-aligned, then a line saying how many
    /// rows and which position they reflect.
    var table: String {
        let money = Set(columns.indices.filter { columns[$0].hasSuffix("_cents") })
        let header = columns.enumerated().map { index, column in
            money.contains(index) ? String(column.dropLast("_cents".count)) : column
        }
        let body = rows.map { row in
            row.enumerated().map { index, value in
                if money.contains(index), case .integer(let cents) = value { return MoneyText.of(cents) }
                return value.plainText
            }
        }
        let numeric = Set(
            columns.indices.filter { index in
                !rows.isEmpty
                    && rows.allSatisfy { row in
                        if case .text = row[index] { return false }
                        return true
                    } && rows.contains { if case .integer = $0[index] { return true } else { return false } }
            })
        var out = rows.isEmpty ? "" : aligned([header] + body, rightAligned: numeric)
        let count = rows.count == 1 ? "1 row" : "\(rows.count) rows"
        out += "(\(count); \(source))\n"
        return out
    }

    func rendered(as format: Format) -> String {
        switch format {
        case .table: table
        case .json: json
        case .csv: csv
        }
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else {
            return text
        }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
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
