import Foundation
import StrataSQLite

/// Consecutive rows of the `events` table, their columns copied out of SQLite into one
/// buffer, so that a thread other than the reading one can hash them while the reader goes
/// on. A value: handing it to another thread shares the buffers, copies nothing.
struct StoredEventBatch: Sendable {
    /// The byte columns kept for each event, in the order they are stored in `bytes`.
    enum Field: Int, CaseIterable {
        case stream, type, recordedAt, data, metadata, prevHash, hash
    }

    /// The column of `SQLiteEventStore.columns` each field is read from.
    private static let columns: [Int32] = [1, 3, 5, 6, 7, 8, 9]
    private static let fields = Field.allCases.count

    /// Every byte column of every event, back to back.
    private(set) var bytes: [UInt8] = []
    /// Per event, `fields` offsets into `bytes`: where each of its fields ends.
    private var ends: [Int] = []
    /// Per event: position, version, schema version.
    private var integers: [Int64] = []
    /// The first event whose row holds a column of another storage class than Strata writes
    /// (`SQLiteEventStore.mistypedColumn`), with what is wrong; its columns hash as if it did not.
    private(set) var firstMistyped: (event: Int, problem: String)?

    /// Room for `events` rows of about `bytesPerEvent` bytes, so filling it rarely reallocates.
    init(reservingFor events: Int, bytesPerEvent: Int = 640) {
        bytes.reserveCapacity(events * bytesPerEvent)
        ends.reserveCapacity(events * StoredEventBatch.fields)
        integers.reserveCapacity(events * 3)
    }

    var count: Int { integers.count / 3 }

    /// Empties the batch for reuse, keeping its buffers when no one else holds them: fresh
    /// ones cost a page fault per 4 KiB written.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        integers.removeAll(keepingCapacity: true)
        firstMistyped = nil
    }

    /// Copies the row `statement` is on (a `SELECT` of `SQLiteEventStore.columns`).
    mutating func append(_ statement: SQLiteStatement) {
        if firstMistyped == nil, let problem = SQLiteEventStore.mistypedColumn(statement) {
            firstMistyped = (count, problem)
        }
        integers.append(statement.int64(0))
        integers.append(statement.int64(2))
        integers.append(statement.int64(4))
        for column in StoredEventBatch.columns {
            bytes.append(contentsOf: statement.unsafeBytes(column))
            ends.append(bytes.count)
        }
    }

    func position(_ event: Int) -> Int64 { integers[3 * event] }
    func version(_ event: Int) -> Int64 { integers[3 * event + 1] }
    func schemaVersion(_ event: Int) -> Int64 { integers[3 * event + 2] }

    /// A field of `event` inside `buffer`, which must be `bytes` (borrowed by the caller
    /// for the whole loop, so it is not borrowed again per field).
    func field(_ field: Field, of event: Int, in buffer: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let index = StoredEventBatch.fields * event + field.rawValue
        let start = index == 0 ? 0 : ends[index - 1]
        return UnsafeRawBufferPointer(rebasing: buffer[start..<ends[index]])
    }

    /// What a hashing thread found in a batch.
    struct Hashes: Sendable {
        /// Each event's chain hash, `SHA-256(stored prevHash ‖ canonical event)`, 32 bytes
        /// each, back to back.
        var hashes: [UInt8]
        /// Per event: its stored `prevHash` is the stored `hash` of the event before it in
        /// the batch, and its stored `hash` is the hex of its chain hash. Never set for the
        /// first event: the batch does not hold the event before it.
        var linkedAndHashed: [Bool]
    }

    /// The chain hash of each event, the canonical event spliced from the stored columns as
    /// `RecordedEvent.canonicalBody` has it, and which events hold their link and hash
    /// within the batch. A stored `prevHash` that is not 64 hex digits hashes as 32 zero
    /// bytes; the link check rejects it in any case.
    func chainHashes() -> Hashes {
        var result = Hashes(
            hashes: [UInt8](repeating: 0, count: 32 * count), linkedAndHashed: [Bool](repeating: false, count: count))
        var body: [UInt8] = []
        body.reserveCapacity(4096)
        var previous = [UInt8](repeating: 0, count: 32)
        var hash = [UInt8](repeating: 0, count: 32)
        var hex = [UInt8](repeating: 0, count: 64)
        bytes.withUnsafeBytes { buffer in
            for event in 0..<count {
                body.removeAll(keepingCapacity: true)
                RecordedEvent.appendEnvelope(
                    to: &body, data: field(.data, of: event, in: buffer), hash: UnsafeRawBufferPointer?.none,
                    metadata: field(.metadata, of: event, in: buffer), position: position(event), prevHash: nil,
                    recordedAt: field(.recordedAt, of: event, in: buffer), schemaVersion: schemaVersion(event),
                    stream: field(.stream, of: event, in: buffer), type: field(.type, of: event, in: buffer),
                    version: version(event))
                let prevHash = field(.prevHash, of: event, in: buffer)
                StoredEventBatch.decodeHex(prevHash, into: &previous)
                body.withUnsafeBytes { HashChain.hash(previous: previous, canonicalEvent: $0, into: &hash) }
                for i in 0..<32 { result.hashes[32 * event + i] = hash[i] }
                guard event > 0 else { continue }
                let stored = field(.hash, of: event, in: buffer)
                StoredEventBatch.encodeHex(hash, into: &hex)
                result.linkedAndHashed[event] =
                    StoredEventBatch.equal(prevHash, field(.hash, of: event - 1, in: buffer))
                    && hex.withUnsafeBytes { StoredEventBatch.equal(stored, $0) }
            }
        }
        return result
    }

    /// Byte equality by `memcmp` (the generic `elementsEqual` is several times slower).
    private static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        guard a.count == b.count else { return false }
        guard let left = a.baseAddress, let right = b.baseAddress else { return true }
        return memcmp(left, right, a.count) == 0
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Lowercase hex of 32 bytes into `out` (64).
    private static func encodeHex(_ bytes: [UInt8], into out: inout [UInt8]) {
        for i in 0..<32 {
            out[2 * i] = hexDigits[Int(bytes[i] >> 4)]
            out[2 * i + 1] = hexDigits[Int(bytes[i] & 0x0F)]
        }
    }

    /// Each byte's value as a hex digit (either case), 0xFF for bytes that are not one.
    private static let nibbles: [UInt8] = (0...255).map { byte -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt8(byte) - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt8(byte) - UInt8(ascii: "A") + 10
        default: 0xFF
        }
    }

    /// 64 hex digits into 32 bytes; anything else into zeros.
    private static func decodeHex(_ text: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        var invalid = text.count != 64
        if !invalid {
            nibbles.withUnsafeBufferPointer { nibbles in
                out.withUnsafeMutableBufferPointer { out in
                    var seen: UInt8 = 0
                    for i in 0..<32 {
                        let high = nibbles[Int(text[2 * i])]
                        let low = nibbles[Int(text[2 * i + 1])]
                        seen |= high | low
                        out[i] = high << 4 | (low & 0x0F)
                    }
                    invalid = seen == 0xFF
                }
            }
        }
        if invalid { for i in 0..<32 { out[i] = 0 } }
    }
}
