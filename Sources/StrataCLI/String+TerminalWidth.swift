extension String {
    /// How many columns a terminal gives the text, for tables that line up whatever script names
    /// are written in: two for a wide character (CJK ideographs, kana, Hangul, fullwidth forms,
    /// emoji shown as pictures), none for one of zero-width scalars alone (a joiner, a lone
    /// combining mark), one for any other (a letter with its combining accents is one
    /// `Character`). What `wcwidth` gives, without the C library's dependence on the locale.
    ///
    /// Printable ASCII is one column a byte, counted without splitting the text into
    /// `Character`s: that took most of `strata query --format table`'s time on a large answer,
    /// whose cells are nearly all ASCII.
    var terminalWidth: Int {
        isPrintableASCII ? utf8.count : characterWidth
    }

    /// Only the characters from space to `~`: each is a `Character` of its own (none combines
    /// with its neighbour), one column wide, and none is escaped when shown (`visible`).
    var isPrintableASCII: Bool {
        var text = self
        return text.withUTF8 { bytes in bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F } }
    }

    /// `terminalWidth` a `Character` at a time, whatever the text holds.
    var characterWidth: Int {
        var width = 0
        for character in self {
            let scalars = character.unicodeScalars
            if scalars.contains(where: \.isWide) || scalars.contains("\u{FE0F}") {
                width += 2
            } else if !scalars.allSatisfy(\.hasNoWidth) {
                width += 1
            }
        }
        return width
    }

    /// The text followed (or, `leading`, preceded) by spaces up to `width` terminal columns.
    func padded(to width: Int, leading: Bool = false) -> String {
        let pad = String(repeating: " ", count: max(0, width - terminalWidth))
        return leading ? pad + self : self + pad
    }
}

extension Unicode.Scalar {
    /// East Asian Wide or Fullwidth (Unicode's EastAsianWidth.txt, its large blocks), or an
    /// emoji shown as a picture by default.
    fileprivate var isWide: Bool {
        if properties.isEmojiPresentation { return true }
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1B000...0x1B2FF, 0x20000...0x2FFFD,
            0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// Takes no column of its own: a combining mark, or a format character (a zero-width space
    /// or joiner, a byte order mark).
    fileprivate var hasNoWidth: Bool {
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: true
        default: false
        }
    }
}
