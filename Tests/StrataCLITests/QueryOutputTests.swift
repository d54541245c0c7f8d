import Projections
import StrataCore
import Testing

@testable import StrataCLI

/// What a query prints of text it took from the history: the history is written by clients,
/// so a cell must not be able to pass for a row, steer the terminal or run in a spreadsheet.
@Suite struct QueryOutputTests {
    private func output(_ rows: [[ProjectionValue]]) -> QueryOutput {
        QueryOutput(
            columns: ["entity", "reason", "amount_cents"], rows: rows, position: 9, source: "audit at position 9")
    }

    /// A line break in a stored reason stays in its cell: one line a row, then the count.
    @Test func aTableCellStaysOnItsLine() throws {
        let forged = "routine\n     265  2026-11-22T05:30:00.000Z  admin9  ERASE_PERSONAL_DATA\r\t\u{1b}[2J\u{85}"
        let table = try output([[.text("account-h2"), .text(forged), .integer(-150)]]).rendered(as: .table)
        let lines = table.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines[3].isEmpty, "\(table)")
        #expect(lines[0].hasPrefix("entity      reason  ") && lines[0].hasSuffix("amount"))
        let escaped = #"routine\n     265  2026-11-22T05:30:00.000Z  admin9  ERASE_PERSONAL_DATA\r\t\u{1b}[2J\u{85}"#
        #expect(lines[1] == "account-h2  " + escaped + "   -1.50")
        #expect(lines[2] == "(1 row; audit at position 9)")
    }

    /// A right-to-left override, an isolate or a mark in a name cannot turn the rest of its row
    /// around where text is shown right to left, nor a line separator break it: each is an escape.
    @Test func bidirectionalControlsAndSeparatorsAreEscapes() throws {
        let name = "Ravi\u{202E}00.000,01\u{202C} \u{2066}x\u{2069}\u{200F}\u{061C}\u{2028}y\u{2029}"
        let table = try output([[.text("account-h9"), .text(name), .integer(100)]]).rendered(as: .table)
        let lines = table.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4, "\(table)")
        let escaped = #"Ravi\u{202e}00.000,01\u{202c} \u{2066}x\u{2069}\u{200f}\u{61c}\u{2028}y\u{2029}"#
        #expect(lines[1] == "account-h9  " + escaped + "    1.00", "\(lines[1])")
        #expect(!table.unicodeScalars.contains { $0.properties.isBidiControl || $0 == "\u{2028}" })
    }

    /// Columns stay aligned on a terminal whatever script a name is written in: a CJK character
    /// or an emoji takes two columns there, a letter with a combining accent one.
    @Test func wideCharactersKeepTheColumnsAligned() throws {
        let rows: [[ProjectionValue]] = [
            [.text("account-1"), .text("山田 太郎"), .integer(100)], [.text("account-2"), .text("Zoë 😀"), .integer(200)],
            [.text("account-3"), .text("Jose\u{301}"), .integer(300)], [.text("account-4"), .text("Kim"), .integer(400)],
        ]
        #expect(
            try output(rows).rendered(as: .table).split(separator: "\n") == [
                "entity     reason     amount",
                "account-1  山田 太郎    1.00",
                "account-2  Zoë 😀       2.00",
                "account-3  Jose\u{301}         3.00",
                "account-4  Kim          4.00",
                "(4 rows; audit at position 9)",
            ])
    }

    /// Each JSON row is the canonical JSON of an object of its columns, keys in RFC 8785's order
    /// (by UTF-16 code units: U+1F600, whose first unit is a surrogate, D83D, sorts before U+FF5A), as if
    /// a dictionary were built and sorted a row; a name two columns share keeps the last column.
    @Test func jsonRowsAreCanonicalObjectsOfTheirColumns() throws {
        let columns = ["zeta", "é", "\u{1F600}", "\u{FF5A}", "a\"b", "zeta", "Z"]
        let rows: [[ProjectionValue]] = [
            [.integer(1), .text("x\n\u{0}"), .null, .text("山田"), .integer(-7), .integer(2), .text("")],
            [.null, .null, .text("\u{202E}"), .integer(Int64.max), .text("\\"), .text("last"), .integer(0)],
        ]
        let output = QueryOutput(columns: columns, rows: rows, position: 3, source: "readmodels at position 3")
        let expected = rows.map { row in
            var object: [String: JSONValue] = [:]
            for (column, value) in zip(columns, row) { object[column] = value.json }
            return CanonicalJSON.string(.object(object))
        }
        #expect(try output.rendered(as: .json) == #"{"position":3,"rows":["# + expected.joined(separator: ",") + "]}\n")
        #expect(expected[1].hasPrefix(#"{"Z":0,"a\"b":"\\","zeta":"last","é":null,"😀":"#), "\(expected[1])")
    }

    /// A comma or a quote that a combining mark follows is one `Character` with it, yet a CSV
    /// reader splits at the comma and ends the field at the quote all the same: such a field is
    /// quoted, its quotes doubled, like any other.
    @Test func csvQuotesACommaOrAQuoteThatAMarkFollows() throws {
        let rows: [[ProjectionValue]] = [[.text("a,\u{301}b"), .text("say \"\u{301}hi\u{301}\""), .text("x\r\n")]]
        #expect(
            try output(rows).rendered(as: .csv) == "entity,reason,amount_cents\r\n"
                + "\"a,\u{301}b\",\"say \"\"\u{301}hi\u{301}\"\"\",\"x\r\n\"\r\n")
    }

    /// Text a spreadsheet would run as a formula gets a `'` in front; numbers, phone numbers
    /// and text with such a character further in are left as they are.
    @Test func csvTextThatStartsAFormulaIsQuotedAsText() throws {
        let rows: [[ProjectionValue]] = [
            [.text("=HYPERLINK(\"http://evil.example/\",\"Click\")"), .text("a=b"), .integer(-5)],
            [.text("-2+3+cmd|' /C calc'!A0"), .text("-x"), .null], [.text("@SUM(A1)"), .text("\tcell"), .integer(0)],
            [.text("+919845012345"), .text("+91 (98450) 12-345"), .text("-1.50")], [.text("=1"), .text(""), .null],
        ]
        #expect(
            try output(rows).rendered(as: .csv) == "entity,reason,amount_cents\r\n"
                + "\"'=HYPERLINK(\"\"http://evil.example/\"\",\"\"Click\"\")\",a=b,-5\r\n"
                + "'-2+3+cmd|' /C calc'!A0,'-x,\r\n" + "'@SUM(A1),'\tcell,0\r\n"
                + "+919845012345,+91 (98450) 12-345,-1.50\r\n" + "'=1,,\r\n")
    }
}
