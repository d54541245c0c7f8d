/// U+FEFF, which Windows' editors and PowerShell write at the start of a text file: a mark of
/// how the file is encoded, not part of its JSON (RFC 8259 lets a parser ignore it). Files an
/// operator edits (the config file, the key file) and the lines `strata send` reads are taken
/// without it, where it was refused as an unexpected character the user cannot see.
public enum ByteOrderMark {
    public static let utf8: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// How many bytes of a mark `bytes` starts with: 3 or 0.
    public static func length(at bytes: some Collection<UInt8>) -> Int {
        bytes.starts(with: utf8) ? utf8.count : 0
    }

    /// `text` without a mark at its start (a file read as text).
    public static func removed(from text: String) -> String {
        var scalars = Substring(text).unicodeScalars
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        return String(scalars)
    }
}
