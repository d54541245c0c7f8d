import StrataCore
import StrataSQLite

/// One row of the `events` table while `SQLiteEventStore.forEachEvent` holds it: views of
/// the stored columns where SQLite keeps them, so a replay copies each byte once, from the
/// page into the output. Not copyable, and passed borrowed, so it cannot outlive the row.
public struct StoredEventRow: ~Copyable {
    private let statement: SQLiteStatement

    init(_ statement: SQLiteStatement) {
        self.statement = statement
    }

    public var position: Int64 { statement.int64(0) }

    /// The whole event, copied out.
    public var event: RecordedEvent { SQLiteEventStore.event(from: statement) }

    /// Appends the event as the bus carries it (`writeJSON`).
    public func appendJSON(to out: inout [UInt8]) {
        var space: UnsafeMutableRawPointer?
        defer { space?.deallocate() }
        let written = writeJSON { capacity in
            space = .allocate(byteCount: capacity, alignment: 1)
            return space!
        }
        out.append(contentsOf: UnsafeRawBufferPointer(start: space, count: written))
    }

    /// Writes the event as the bus carries it, byte for byte what `RecordedEvent.json` gives
    /// for the same row, without building the event: keys in RFC 8785 order, the stored
    /// canonical `data` and `metadata` spliced in as they are, every piece one memcpy from
    /// SQLite's page. `space` is asked once for room for at least that many bytes; returns
    /// how many were written there.
    public func writeJSON(_ space: (_ atLeast: Int) -> UnsafeMutableRawPointer) -> Int {
        let s = statement
        let data = s.unsafeBytes(6)
        let metadata = s.unsafeBytes(7)
        let hash = s.unsafeBytes(9)
        let prevHash = s.unsafeBytes(8)
        let recordedAt = s.unsafeBytes(5)
        let stream = s.unsafeBytes(1)
        let type = s.unsafeBytes(3)
        // Escaping makes a byte at most six (\u00XX); an integer is at most 20 characters.
        let text = hash.count + prevHash.count + recordedAt.count + stream.count + type.count
        let start = space(data.count + metadata.count + 6 * text + StoredEventRow.keyBytes + 3 * 20 + 10)
        var p = start
        StoredEventRow.copy(#"{"data":"#, to: &p)
        StoredEventRow.copy(data, to: &p)
        StoredEventRow.copy(#","hash":"#, to: &p)
        StoredEventRow.copyString(hash, to: &p)
        StoredEventRow.copy(#","metadata":"#, to: &p)
        StoredEventRow.copy(metadata, to: &p)
        StoredEventRow.copy(#","position":"#, to: &p)
        StoredEventRow.copyInteger(s.int64(0), to: &p)
        StoredEventRow.copy(#","prevHash":"#, to: &p)
        StoredEventRow.copyString(prevHash, to: &p)
        StoredEventRow.copy(#","recordedAt":"#, to: &p)
        StoredEventRow.copyString(recordedAt, to: &p)
        StoredEventRow.copy(#","schemaVersion":"#, to: &p)
        StoredEventRow.copyInteger(s.int64(4), to: &p)
        StoredEventRow.copy(#","stream":"#, to: &p)
        StoredEventRow.copyString(stream, to: &p)
        StoredEventRow.copy(#","type":"#, to: &p)
        StoredEventRow.copyString(type, to: &p)
        StoredEventRow.copy(#","version":"#, to: &p)
        StoredEventRow.copyInteger(s.int64(2), to: &p)
        p.storeBytes(of: UInt8(ascii: "}"), as: UInt8.self)
        p += 1
        return p - start
    }

    /// The bytes of the keys and punctuation `writeJSON` writes, quotes of string values included.
    private static let keyBytes = 160

    private static func copy(_ literal: StaticString, to p: inout UnsafeMutableRawPointer) {
        p.copyMemory(from: literal.utf8Start, byteCount: literal.utf8CodeUnitCount)
        p += literal.utf8CodeUnitCount
    }

    private static func copy(_ bytes: UnsafeRawBufferPointer, to p: inout UnsafeMutableRawPointer) {
        guard let base = bytes.baseAddress else { return }
        p.copyMemory(from: base, byteCount: bytes.count)
        p += bytes.count
    }

    /// A JSON string literal of stored text: copied whole when nothing needs escaping
    /// (hashes, times, stream names and types never do), else escaped by
    /// `CanonicalJSON.appendString` itself.
    private static func copyString(_ bytes: UnsafeRawBufferPointer, to p: inout UnsafeMutableRawPointer) {
        guard !needsEscaping(bytes) else {
            var escaped: [UInt8] = []
            CanonicalJSON.appendString(utf8: bytes, to: &escaped)
            escaped.withUnsafeBytes { copy($0, to: &p) }
            return
        }
        p.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
        p += 1
        copy(bytes, to: &p)
        p.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
        p += 1
    }

    /// Whether any byte is a control character, `"` or a backslash, eight bytes at a time: a byte
    /// below n shows as a high bit in (w − n·0x01…) & ~w & 0x80…, and a zero byte of w ^ c·0x01…
    /// (one equal to c) likewise; exact as a yes or no (which byte it was does not matter here).
    static func needsEscaping(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var offset = 0
        while offset + 8 <= bytes.count {
            let w = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            let control = (w &- 0x20 &* ones) & ~w
            let quote = w ^ (0x22 &* ones)
            let backslash = w ^ (0x5C &* ones)
            if (control | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)) & highs != 0 { return true }
            offset += 8
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            offset += 1
        }
        return false
    }

    /// Decimal digits, as `String(value)` writes them, without making a String.
    private static func copyInteger(_ value: Int64, to p: inout UnsafeMutableRawPointer) {
        if value < 0 {
            p.storeBytes(of: UInt8(ascii: "-"), as: UInt8.self)
            p += 1
        }
        var digits = 1
        var rest = value.magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var magnitude = value.magnitude
        for index in stride(from: digits - 1, through: 0, by: -1) {
            p.storeBytes(of: UInt8(ascii: "0") + UInt8(magnitude % 10), toByteOffset: index, as: UInt8.self)
            magnitude /= 10
        }
        p += digits
    }
}
