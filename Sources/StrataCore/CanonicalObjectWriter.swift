/// Writes one JSON object member by member, as `CanonicalEncoder` would write it: the
/// mirror of `CanonicalJSONReader`, for types that write their own canonical JSON
/// (`CanonicalJSONWritable`).
///
/// The generic encoder reaches every field through a keyed container and sorts the keys
/// afterwards; an event writing itself costs a fraction of that, and encoding events was a
/// fifth of the command service's writer. Members must come in RFC 8785 order, which for the
/// ASCII keys used here is byte order (a debug build checks it); optionals that are nil are
/// left out, as `encodeIfPresent` leaves them out. Tests hold every writer to the generic
/// encoder's bytes for the same value.
public struct CanonicalObjectWriter {
    @usableFromInline var out: [UInt8]
    private var first = true
    #if DEBUG
        private var lastKey: [UInt8] = []
    #endif

    private init() {
        out = []
    }

    /// Appends to `out` the object whose members `body` writes.
    public static func write(
        to out: inout [UInt8], _ body: (inout CanonicalObjectWriter) throws(CanonicalJSONRefusal) -> Void
    ) throws(CanonicalJSONRefusal) {
        var writer = CanonicalObjectWriter()
        // The buffer moves into the writer and back; nothing is copied.
        swap(&writer.out, &out)
        defer { swap(&writer.out, &out) }
        writer.out.append(UInt8(ascii: "{"))
        try body(&writer)
        writer.out.append(UInt8(ascii: "}"))
    }

    @usableFromInline mutating func key(_ key: StaticString) {
        let bytes = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        #if DEBUG
            precondition(first || lastKey.lexicographicallyPrecedes(bytes), "member \(key) is out of order")
            lastKey = Array(bytes)
        #endif
        if !first { out.append(UInt8(ascii: ",")) }
        first = false
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: bytes)
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    public mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        CanonicalJSON.appendString(value, to: &out)
    }

    public mutating func optionalString(_ key: StaticString, _ value: String?) {
        if let value { string(key, value) }
    }

    public mutating func integer(_ key: StaticString, _ value: Int64) {
        self.key(key)
        CanonicalJSON.appendInteger(value, to: &out)
    }

    public mutating func optionalInteger(_ key: StaticString, _ value: Int64?) {
        if let value { integer(key, value) }
    }

    public mutating func int(_ key: StaticString, _ value: Int) {
        integer(key, Int64(value))
    }

    public mutating func optionalInt(_ key: StaticString, _ value: Int?) {
        if let value { integer(key, Int64(value)) }
    }

    public mutating func bool(_ key: StaticString, _ value: Bool) {
        self.key(key)
        out.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// A string enumeration, by its raw value.
    public mutating func enumeration<E: RawRepresentable>(_ key: StaticString, _ value: E) where E.RawValue == String {
        string(key, value.rawValue)
    }

    public mutating func date(_ key: StaticString, _ value: LocalDate) throws(CanonicalJSONRefusal) {
        self.key(key)
        try value.writeCanonicalJSON(to: &out)
    }

    public mutating func timestamp(_ key: StaticString, _ value: Timestamp) {
        string(key, value.description)
    }

    /// A nested value that writes itself.
    public mutating func object(_ key: StaticString, _ value: some CanonicalJSONWritable) throws(CanonicalJSONRefusal) {
        self.key(key)
        try value.writeCanonicalJSON(to: &out)
    }

    /// An array of values that write themselves. Inlinable, so that it is compiled for each
    /// element type where it is used: the one generic copy walked a schedule through the
    /// runtime's metadata, 1.6 k instructions an entry before the entry wrote a byte.
    @inlinable
    public mutating func objects(
        _ key: StaticString, _ values: [some CanonicalJSONWritable]
    ) throws(CanonicalJSONRefusal) {
        self.key(key)
        out.append(UInt8(ascii: "["))
        for index in values.indices {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            try values[index].writeCanonicalJSON(to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}
