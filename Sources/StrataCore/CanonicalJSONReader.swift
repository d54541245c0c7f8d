/// Reads JSON written exactly as `CanonicalJSON` writes it (no whitespace, members in key
/// order, integers in plain decimal), member by member, without building a `JSONValue`:
/// the fast way to read stored event data, which is always written that way.
///
/// It reads only what it is sure of and gives up on the rest: whitespace, members out of
/// order or unknown to the caller, escapes in strings, a number not in canonical form,
/// deep nesting. Giving up is not an error about the document: the caller then reads it
/// with `JSONParser` and Foundation's decoder, which decide. So whatever this reader
/// accepts, the general path accepts too, with the same values; it only saves the time.
public struct CanonicalJSONReader {
    /// The document is not one this reader takes: read it the general way.
    public struct GiveUp: Error, Sendable {
        public init() {}
    }

    private let bytes: UnsafeRawBufferPointer
    private var index = 0
    /// Whether the next member of the object being read is preceded by a comma.
    private var needsComma = false

    private init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Runs `body` over `bytes`, which it must read to the end; nil when either gives up.
    public static func read<T>(
        _ bytes: some Collection<UInt8>, _ body: (inout CanonicalJSONReader) throws(GiveUp) -> T
    ) -> T? {
        func run(_ raw: UnsafeRawBufferPointer) -> T? {
            var reader = CanonicalJSONReader(bytes: raw)
            guard let value = try? body(&reader), reader.index == raw.count else { return nil }
            return value
        }
        if let result = bytes.withContiguousStorageIfAvailable({ run(UnsafeRawBufferPointer($0)) }) { return result }
        return Array(bytes).withUnsafeBytes { run($0) }
    }

    /// The byte at `index`, or 0 past the end (0 is never valid where a byte is expected).
    private func peek(_ offset: Int = 0) -> UInt8 {
        index + offset < bytes.count ? bytes[index + offset] : 0
    }

    private mutating func expect(_ byte: UInt8) throws(GiveUp) {
        guard peek() == byte else { throw GiveUp() }
        index += 1
    }

    // MARK: - Objects and arrays

    public mutating func beginObject() throws(GiveUp) {
        try expect(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Ends the object: any member not read yet (unknown, out of order, repeated) gives up.
    public mutating func endObject() throws(GiveUp) {
        try expect(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Whether the next member is `key`; if so, reads up to its value.
    public mutating func member(_ key: StaticString) -> Bool {
        let start = index + (needsComma ? 1 : 0)
        let count = key.utf8CodeUnitCount
        guard start + count + 3 <= bytes.count, !needsComma || bytes[index] == UInt8(ascii: ","),
            bytes[start] == UInt8(ascii: "\""), bytes[start + count + 1] == UInt8(ascii: "\""),
            bytes[start + count + 2] == UInt8(ascii: ":")
        else { return false }
        let name = key.utf8Start
        for i in 0..<count where bytes[start + 1 + i] != name[i] { return false }
        index = start + count + 3
        needsComma = true
        return true
    }

    /// Reads the member `key`, which must come next.
    public mutating func required<T>(
        _ key: StaticString, _ value: (inout CanonicalJSONReader) throws(GiveUp) -> T
    ) throws(GiveUp) -> T {
        guard member(key) else { throw GiveUp() }
        return try value(&self)
    }

    /// Reads the member `key` if it comes next: nil when absent or null, as `decodeIfPresent`.
    public mutating func optional<T>(
        _ key: StaticString, _ value: (inout CanonicalJSONReader) throws(GiveUp) -> T
    ) throws(GiveUp) -> T? {
        guard member(key) else { return nil }
        if peek() == UInt8(ascii: "n") {
            try literal("null")
            return nil
        }
        return try value(&self)
    }

    /// Reads an array whose elements `element` reads.
    public mutating func array<T>(
        _ element: (inout CanonicalJSONReader) throws(GiveUp) -> T
    ) throws(GiveUp) -> [T] {
        try expect(UInt8(ascii: "["))
        var elements: [T] = []
        if peek() != UInt8(ascii: "]") {
            while true {
                elements.append(try element(&self))
                guard peek() == UInt8(ascii: ",") else { break }
                index += 1
            }
        }
        try expect(UInt8(ascii: "]"))
        needsComma = true
        return elements
    }

    private mutating func literal(_ text: StaticString) throws(GiveUp) {
        let count = text.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw GiveUp() }
        for i in 0..<count where bytes[index + i] != text.utf8Start[i] { throw GiveUp() }
        index += count
    }

    // MARK: - Leaves

    /// A string without escapes: the bytes between the quotes, checked to be UTF-8
    /// (`JSONParser`'s rule: no overlong forms, no surrogates) and free of control characters.
    public mutating func string() throws(GiveUp) -> String {
        let range = try stringBytes()
        let text = UnsafeRawBufferPointer(rebasing: bytes[range])
        if !text.contains(where: { $0 >= 0x80 }) { return String(decoding: text, as: UTF8.self) }
        guard let valid = String(validating: text, as: UTF8.self) else { throw GiveUp() }
        return valid
    }

    /// The range of a string's bytes without its quotes; gives up on escapes and control characters.
    private mutating func stringBytes() throws(GiveUp) -> Range<Int> {
        try expect(UInt8(ascii: "\""))
        let start = index
        while true {
            guard index < bytes.count else { throw GiveUp() }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { throw GiveUp() }
            index += 1
        }
        index += 1
        return start..<(index - 1)
    }

    /// An integer in canonical form: `0`, or an optional minus and no leading zero, in `Int64`.
    public mutating func integer() throws(GiveUp) -> Int64 {
        let negative = peek() == UInt8(ascii: "-")
        if negative { index += 1 }
        let first = peek()
        guard first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9"), !(negative && first == UInt8(ascii: "0"))
        else { throw GiveUp() }
        // Accumulated negatively so that Int64.min reads.
        var value: Int64 = 0
        var digits = 0
        while true {
            let byte = peek()
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            let (times, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !o1, !o2 else { throw GiveUp() }
            value = next
            digits += 1
            index += 1
        }
        guard first != UInt8(ascii: "0") || digits == 1 else { throw GiveUp() }
        switch peek() {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): throw GiveUp()
        default: break
        }
        if negative { return value }
        guard value != Int64.min else { throw GiveUp() }
        return -value
    }

    /// An integer that fits `Int`.
    public mutating func int() throws(GiveUp) -> Int {
        guard let value = Int(exactly: try integer()) else { throw GiveUp() }
        return value
    }

    public mutating func bool() throws(GiveUp) -> Bool {
        if peek() == UInt8(ascii: "t") {
            try literal("true")
            return true
        }
        try literal("false")
        return false
    }

    /// A `YYYY-MM-DD` string, read as `LocalDate(_:)` reads it.
    public mutating func date() throws(GiveUp) -> LocalDate {
        let range = try stringBytes()
        let b = bytes[range]
        guard range.count == 10, b[range.lowerBound + 4] == UInt8(ascii: "-"),
            b[range.lowerBound + 7] == UInt8(ascii: "-")
        else { throw GiveUp() }
        func number(_ offset: Int, _ count: Int) -> Int? {
            var value = 0
            for byte in b[(range.lowerBound + offset)..<(range.lowerBound + offset + count)] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let date = LocalDate(year: year, month: month, day: day)
        else { throw GiveUp() }
        return date
    }

    /// An RFC 3339 UTC timestamp string, read as `Timestamp(_:)` reads it.
    public mutating func timestamp() throws(GiveUp) -> Timestamp {
        guard let value = Timestamp(try string()) else { throw GiveUp() }
        return value
    }

    /// A string that is one of `E`'s raw values.
    public mutating func enumeration<E: RawRepresentable>(_: E.Type = E.self) throws(GiveUp) -> E
    where E.RawValue == String {
        guard let value = E(rawValue: try string()) else { throw GiveUp() }
        return value
    }

    // MARK: - Members

    /// The member `key`, which must come next, as a string.
    public mutating func string(_ key: StaticString) throws(GiveUp) -> String {
        try required(key) { reader throws(GiveUp) in try reader.string() }
    }

    public mutating func optionalString(_ key: StaticString) throws(GiveUp) -> String? {
        try optional(key) { reader throws(GiveUp) in try reader.string() }
    }

    public mutating func integer(_ key: StaticString) throws(GiveUp) -> Int64 {
        try required(key) { reader throws(GiveUp) in try reader.integer() }
    }

    public mutating func optionalInteger(_ key: StaticString) throws(GiveUp) -> Int64? {
        try optional(key) { reader throws(GiveUp) in try reader.integer() }
    }

    public mutating func int(_ key: StaticString) throws(GiveUp) -> Int {
        try required(key) { reader throws(GiveUp) in try reader.int() }
    }

    public mutating func optionalInt(_ key: StaticString) throws(GiveUp) -> Int? {
        try optional(key) { reader throws(GiveUp) in try reader.int() }
    }

    public mutating func date(_ key: StaticString) throws(GiveUp) -> LocalDate {
        try required(key) { reader throws(GiveUp) in try reader.date() }
    }

    public mutating func timestamp(_ key: StaticString) throws(GiveUp) -> Timestamp {
        try required(key) { reader throws(GiveUp) in try reader.timestamp() }
    }

    public mutating func enumeration<E: RawRepresentable>(_ key: StaticString, _: E.Type = E.self) throws(GiveUp) -> E
    where E.RawValue == String {
        try required(key) { reader throws(GiveUp) in try reader.enumeration() }
    }

    /// The member `key`, which must come next, as an object that `body` reads between
    /// `beginObject` and `endObject`.
    public mutating func object<T>(
        _ key: StaticString, _ body: (inout CanonicalJSONReader) throws(GiveUp) -> T
    ) throws(GiveUp) -> T {
        guard member(key) else { throw GiveUp() }
        return try object(body)
    }

    /// An object that `body` reads member by member.
    public mutating func object<T>(_ body: (inout CanonicalJSONReader) throws(GiveUp) -> T) throws(GiveUp) -> T {
        try beginObject()
        let value = try body(&self)
        try endObject()
        return value
    }

    /// The member `key`, which must come next, as an array of objects that `body` reads.
    public mutating func objects<T>(
        _ key: StaticString, _ body: (inout CanonicalJSONReader) throws(GiveUp) -> T
    ) throws(GiveUp) -> [T] {
        guard member(key) else { throw GiveUp() }
        return try array { reader throws(GiveUp) in try reader.object(body) }
    }

    // MARK: - Any value, checked canonical

    /// Passes over one value of any shape, which must be exactly as `CanonicalJSON` would
    /// write it after `JSONParser` read it, and returns where its bytes are. Keys must be
    /// ASCII (their order then is plain byte order), strings free of escapes.
    public mutating func canonicalValue(depth: Int = 1) throws(GiveUp) -> Range<Int> {
        let start = index
        switch peek() {
        case UInt8(ascii: "{"):
            guard depth <= JSONParser.defaultMaximumDepth else { throw GiveUp() }
            index += 1
            var previousKey: Range<Int>?
            if peek() != UInt8(ascii: "}") {
                while true {
                    let key = try stringBytes()
                    let name = bytes[key]
                    guard !name.contains(where: { $0 >= 0x80 }) else { throw GiveUp() }
                    if let previousKey {
                        guard bytes[previousKey].lexicographicallyPrecedes(name) else { throw GiveUp() }
                    }
                    previousKey = key
                    try expect(UInt8(ascii: ":"))
                    _ = try canonicalValue(depth: depth + 1)
                    guard peek() == UInt8(ascii: ",") else { break }
                    index += 1
                }
            }
            try expect(UInt8(ascii: "}"))
        case UInt8(ascii: "["):
            guard depth <= JSONParser.defaultMaximumDepth else { throw GiveUp() }
            index += 1
            if peek() != UInt8(ascii: "]") {
                while true {
                    _ = try canonicalValue(depth: depth + 1)
                    guard peek() == UInt8(ascii: ",") else { break }
                    index += 1
                }
            }
            try expect(UInt8(ascii: "]"))
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try integer()
        }
        needsComma = true
        return start..<index
    }

    /// An object of any members, checked canonical as `canonicalValue` checks it, copied.
    public mutating func canonicalObject(depth: Int = 1) throws(GiveUp) -> [UInt8] {
        guard peek() == UInt8(ascii: "{") else { throw GiveUp() }
        return copyBytes(try canonicalValue(depth: depth))
    }

    /// The bytes of a range `canonicalValue` returned.
    public func copyBytes(_ range: Range<Int>) -> [UInt8] {
        Array(UnsafeRawBufferPointer(rebasing: bytes[range]))
    }
}
