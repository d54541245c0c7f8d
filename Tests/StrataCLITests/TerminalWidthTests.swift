import Testing

@testable import StrataCLI

/// The table's shortcut for printable ASCII (`isPrintableASCII`) must print exactly what the
/// `Character` and scalar at a time way prints, byte for byte, whatever text a cell holds.
@Suite struct TerminalWidthTests {
    /// Pieces of text that strain one rule or another: controls, a CR LF that is one `Character`,
    /// combining marks, joiners, emoji with modifiers and flags, wide and halfwidth forms, Hangul
    /// jamo that join, bidirectional controls, separators, a prepended mark that takes the space
    /// after it into its `Character`, and plain ASCII.
    private static let pieces = [
        "a", "Z", "7", " ", "  ", "~", ",", "\"", "=", "-", "é", "e\u{301}", "\u{301}", "山田", "😀", "👍🏽", "🇮🇳",
        "\u{200D}", "\u{FE0F}", "\u{600}", "\u{600} ", "\u{915}\u{94D}\u{937}", "\n", "\r\n", "\r", "\t", "\u{1B}[2J", "\u{7F}",
        "\u{85}", "\u{202E}", "\u{2066}", "\u{2028}", "\u{2029}", "\u{200F}", "ﾊﾝ", "Ａ", "\u{1100}\u{1161}", "\u{0}",
    ]

    /// A repeatable run of generated cells: mostly printable ASCII (the shortcut), the rest with
    /// the pieces above somewhere in them (the way a `Character` at a time).
    private static func cells(count: Int) -> [String] {
        var random = SplitMix64(seed: 0x5EED_7AB1E)
        return (0..<count).map { _ in
            var cell = ""
            let exotic = random.next() % 2 == 0
            for _ in 0..<(random.next() % 9) {
                if exotic && random.next() % 3 == 0 {
                    cell += pieces[Int(random.next() % UInt64(pieces.count))]
                } else {
                    cell.unicodeScalars.append(Unicode.Scalar(UInt8(0x20 + random.next() % 0x5F)))
                }
            }
            return cell
        }
    }

    /// Every text of at most two ASCII bytes, and many generated cells: the same width and the
    /// same shown bytes by either way.
    @Test func theASCIIShortcutMeasuresAndShowsAsTheCharacterWayDoes() {
        let ascii = (0..<128).map { String(Unicode.Scalar(UInt8($0))) }
        let texts = [""] + ascii + ascii.flatMap { first in ascii.map { first + $0 } } + Self.cells(count: 20_000)
        var shortcuts = 0
        for text in texts {
            if text.isPrintableASCII { shortcuts += 1 }
            #expect(text.terminalWidth == text.characterWidth, "\(text.debugDescription)")
            #expect(Array(visible(text).utf8) == Array(escapingEachScalar(text).utf8), "\(text.debugDescription)")
        }
        #expect(shortcuts > 9_000 && shortcuts < texts.count - 9_000)
    }

    /// Lines of generated cells, left- and right-aligned, indented or not, their trailing spaces
    /// dropped as whole `Character`s: the same bytes as joining padded strings gave.
    @Test func aLineIsTheBytesOfItsPaddedCellsJoined() {
        let cells = Self.cells(count: 24_000)
        var random = SplitMix64(seed: 42)
        for start in stride(from: 0, to: cells.count, by: 4) {
            let row = Array(cells[start..<start + 4])
            let widths = row.map { escapingEachScalar($0).characterWidth + Int(random.next() % 3) }
            let rightAligned = Set((0..<4).filter { _ in random.next() % 2 == 0 })
            let indent = random.next() % 4 == 0 ? "  " : ""
            let expected = Self.joinedLine(row, widths: widths, rightAligned: rightAligned, indent: indent)
            let line = alignedLine(row, widths: widths, rightAligned: rightAligned, indent: indent)
            #expect(Array(line.utf8) == Array(expected.utf8), "\(row.debugDescription)")
        }
    }

    /// A space after a prepended mark is part of the mark's `Character`, so it stays.
    @Test func aSpaceAfterAPrependedMarkStaysAtTheEndOfALine() {
        #expect(alignedLine(["x", "y\u{600} "], widths: [1, 5], rightAligned: []) == "x  y\u{600} \n")
        #expect(alignedLine(["x", "y "], widths: [1, 5], rightAligned: []) == "x  y\n")
    }

    /// The line as it was first written: each cell shown and padded by `Character`s, joined two
    /// spaces apart, then trailing spaces dropped a `Character` at a time.
    private static func joinedLine(_ row: [String], widths: [Int], rightAligned: Set<Int>, indent: String) -> String {
        let cells = row.enumerated().map { index, cell in
            let shown = escapingEachScalar(cell)
            let pad = String(repeating: " ", count: max(0, widths[index] - shown.characterWidth))
            return rightAligned.contains(index) ? pad + shown : shown + pad
        }
        var line = indent + cells.joined(separator: "  ")
        while line.last == " " { line.removeLast() }
        return line + "\n"
    }
}

/// A small seeded generator (SplitMix64), so that every run checks the same cells.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
