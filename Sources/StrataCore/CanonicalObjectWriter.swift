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
///
/// Keys, numbers, dates and strings that need no escaping are laid out in a buffer on the
/// stack and added to the output a few hundred bytes at a time: appending to an array byte
/// by byte checks its ownership and capacity at every byte, which made a schedule entry's
/// six members cost 2.9 k instructions. The writer points into that buffer, so it cannot be
/// copied out of the closure that receives it (`~Copyable`).
public struct CanonicalObjectWriter: ~Copyable {
    @usableFromInline var out: [UInt8]
    /// Bytes written but not yet appended to `out`.
    private let staged: UnsafeMutablePointer<UInt8>
    private var stagedCount = 0
    private var first = true
    #if DEBUG
        private var lastKey: [UInt8] = []
    #endif

    /// The stack buffer's size: a schedule entry or an allocation fits whole.
    static let stagingCapacity = 256

    private init(staging: UnsafeMutablePointer<UInt8>) {
        out = []
        staged = staging
    }

    /// Appends to `out` the object whose members `body` writes.
    public static func write(
        to out: inout [UInt8], _ body: (inout CanonicalObjectWriter) throws(CanonicalJSONRefusal) -> Void
    ) throws(CanonicalJSONRefusal) {
        var failure: CanonicalJSONRefusal?
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: stagingCapacity) { staging in
            var writer = CanonicalObjectWriter(staging: staging.baseAddress!)
            // The buffer moves into the writer and back; nothing is copied.
            swap(&writer.out, &out)
            defer { swap(&writer.out, &out) }
            writer.stage(UInt8(ascii: "{"))
            do throws(CanonicalJSONRefusal) {
                try body(&writer)
                writer.makeRoom(1)
                writer.stage(UInt8(ascii: "}"))
            } catch {
                failure = error
            }
            writer.flush()
        }
        if let failure { throw failure }
    }

    @usableFromInline mutating func key(_ key: StaticString) {
        let bytes = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        #if DEBUG
            precondition(first || lastKey.lexicographicallyPrecedes(bytes), "member \(key) is out of order")
            lastKey = Array(bytes)
        #endif
        precondition(bytes.count + 4 <= Self.stagingCapacity, "member \(key) has a key longer than any in the catalog")
        makeRoom(bytes.count + 4)
        if !first { stage(UInt8(ascii: ",")) }
        first = false
        stage(UInt8(ascii: "\""))
        stage(bytes)
        stage(UInt8(ascii: "\""))
        stage(UInt8(ascii: ":"))
    }

    public mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        var value = value
        value.withUTF8 { bytes in
            // Most strings (ids, names, dates) need no escaping and are short: staged whole.
            guard bytes.count + 2 <= Self.stagingCapacity, bytes.allSatisfy(CanonicalJSON.isLiteral) else {
                flush()
                CanonicalJSON.appendString(utf8: bytes, to: &out)
                return
            }
            makeRoom(bytes.count + 2)
            stage(UInt8(ascii: "\""))
            stage(bytes)
            stage(UInt8(ascii: "\""))
        }
    }

    public mutating func optionalString(_ key: StaticString, _ value: String?) {
        if let value { string(key, value) }
    }

    public mutating func integer(_ key: StaticString, _ value: Int64) {
        self.key(key)
        makeRoom(20)
        stagedCount += CanonicalJSON.writeInteger(value, to: staged + stagedCount)
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
        let text: StaticString = value ? "true" : "false"
        makeRoom(text.utf8CodeUnitCount)
        stage(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A string enumeration, by its raw value.
    public mutating func enumeration<E: RawRepresentable>(_ key: StaticString, _ value: E) where E.RawValue == String {
        string(key, value.rawValue)
    }

    public mutating func date(_ key: StaticString, _ value: LocalDate) throws(CanonicalJSONRefusal) {
        self.key(key)
        makeRoom(LocalDate.quotedLength)
        guard let written = value.writeQuoted(to: staged + stagedCount) else {
            flush()
            return try value.writeCanonicalJSON(to: &out)
        }
        stagedCount += written
    }

    public mutating func timestamp(_ key: StaticString, _ value: Timestamp) {
        string(key, value.description)
    }

    /// A nested value that writes itself.
    public mutating func object(_ key: StaticString, _ value: some CanonicalJSONWritable) throws(CanonicalJSONRefusal) {
        self.key(key)
        flush()
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
        flush()
        out.append(UInt8(ascii: "["))
        for index in values.indices {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            try values[index].writeCanonicalJSON(to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Appends what is staged to `out`: before anything is written there directly.
    @usableFromInline mutating func flush() {
        guard stagedCount > 0 else { return }
        out.append(contentsOf: UnsafeBufferPointer(start: staged, count: stagedCount))
        stagedCount = 0
    }

    /// Flushes unless `count` more bytes fit; no member stages more than the buffer holds.
    private mutating func makeRoom(_ count: Int) {
        if stagedCount + count > Self.stagingCapacity { flush() }
    }

    private mutating func stage(_ byte: UInt8) {
        staged[stagedCount] = byte
        stagedCount += 1
    }

    private mutating func stage(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        (staged + stagedCount).update(from: base, count: bytes.count)
        stagedCount += bytes.count
    }
}
