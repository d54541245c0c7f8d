/// Encodes any `Encodable` straight to canonical JSON bytes (RFC 8785, as `CanonicalJSON`
/// writes them), with no `JSONValue` tree in between.
///
/// Appending an event encodes it once, and building a tree of dictionaries to sort and print
/// afterwards was most of that cost. Here every leaf is written once into one shared byte
/// arena as it is encoded; an object keeps only (key, range) entries, sorted when the whole
/// value is written out. What it produces is what `CanonicalJSON.bytes(JSONValueEncoder
/// .encode(value))` produces, byte for byte (a test holds the two together): optionals
/// encoded with `encodeIfPresent` are omitted when nil, a key encoded twice keeps its last
/// value, and a floating-point number or an integer beyond 64 signed bits is refused with
/// `EncodingError.invalidValue`.
public enum CanonicalEncoder {
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        // A value that writes itself (every event does) needs no arena and no tree.
        if let writable = value as? any CanonicalJSONWritable {
            var out: [UInt8] = []
            out.reserveCapacity(512)
            try write(writable, of: value, at: [], to: &out)
            return out
        }
        let arena = Arena()
        let root = Node(arena: arena, parent: nil, key: nil)
        // Not a leaf (checked above): straight to its containers.
        try value.encode(to: NodeEncoder(node: root))
        var out: [UInt8] = []
        out.reserveCapacity(arena.bytes.count + 64)
        root.write(to: &out)
        return out
    }

    /// `writable`'s own canonical JSON; a refusal becomes the encoder's error at `path`.
    fileprivate static func write(
        _ writable: any CanonicalJSONWritable, of value: some Encodable, at path: [any CodingKey],
        to out: inout [UInt8]
    ) throws {
        do throws(CanonicalJSONRefusal) {
            try writable.writeCanonicalJSON(to: &out)
        } catch {
            throw EncodingError.invalidValue(value, .init(codingPath: path, debugDescription: error.reason))
        }
    }
}

/// The leaf bytes of one encoding, in the order they were encoded.
private final class Arena {
    var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(512)
    }
}

/// One value being encoded: a leaf (a range of the arena), an object or an array (entries
/// that are leaves or nested nodes), written out in canonical order at the end.
private final class Node {
    enum Content {
        case leaf(Range<Int>)
        case node(Node)
    }

    enum Shape {
        case unset, single, object, array
    }

    let arena: Arena
    /// For error paths only: coding paths are built when an error needs one.
    let parent: Node?
    let key: (any CodingKey)?
    var shape = Shape.unset
    var members: [(key: String, content: Content)] = []
    var elements: [Content] = []

    init(arena: Arena, parent: Node?, key: (any CodingKey)?) {
        self.arena = arena
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        var path: [any CodingKey] = []
        var node: Node? = self
        while let current = node, let key = current.key {
            path.append(key)
            node = current.parent
        }
        return path.reversed()
    }

    /// Encodes `value` as this node's whole content.
    func store<T: Encodable>(_ value: T) throws {
        if let leaf = try leaf(value, key: nil) {
            shape = .single
            elements = [.leaf(leaf)]
            return
        }
        try value.encode(to: NodeEncoder(node: self))
    }

    /// `value` written into the arena when it writes its own canonical JSON (the standard
    /// library's leaf types, and hot types that do it by hand); nil when it goes through the
    /// generic containers. One conformance check, not a cast per type.
    func leaf<T: Encodable>(_ value: T, key: (any CodingKey)?) throws -> Range<Int>? {
        guard let leaf = value as? any CanonicalJSONWritable else { return nil }
        let start = arena.bytes.count
        try CanonicalEncoder.write(leaf, of: value, at: path(key), to: &arena.bytes)
        return start..<arena.bytes.count
    }

    func path(_ key: (any CodingKey)?) -> [any CodingKey] {
        key.map { codingPath + [$0] } ?? codingPath
    }

    /// The content of `value` under `key`: a leaf, or a nested node filled by its encoder.
    func content<T: Encodable>(_ value: T, key: any CodingKey) throws -> Content {
        if let leaf = try leaf(value, key: key) { return .leaf(leaf) }
        let child = Node(arena: arena, parent: self, key: key)
        try child.store(value)
        return .node(child)
    }

    /// Bytes written straight into the arena, as one leaf.
    func literal(_ write: (inout [UInt8]) -> Void) -> Content {
        let start = arena.bytes.count
        write(&arena.bytes)
        return .leaf(start..<arena.bytes.count)
    }

    func write(to out: inout [UInt8]) {
        switch shape {
        case .unset:
            // A type that encoded nothing at all is an empty object, as with JSONEncoder.
            out.append(contentsOf: "{}".utf8)
        case .single:
            if let only = elements.last { write(only, to: &out) } else { out.append(contentsOf: "null".utf8) }
        case .array:
            out.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(element, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object:
            out.append(UInt8(ascii: "{"))
            // Sorted by key (UTF-16 code units, RFC 8785), the last of equal keys kept.
            let order = members.indices.sorted { a, b in
                let (x, y) = (members[a].key, members[b].key)
                return x == y ? a < b : CanonicalJSON.keyPrecedes(x, y)
            }
            var first = true
            for (rank, index) in order.enumerated() {
                if rank + 1 < order.count && members[order[rank + 1]].key == members[index].key { continue }
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                CanonicalJSON.appendString(members[index].key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(members[index].content, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private func write(_ content: Content, to out: inout [UInt8]) {
        switch content {
        case .leaf(let range): out.append(contentsOf: arena.bytes[range])
        case .node(let node): node.write(to: &out)
        }
    }

    func becomeObject() {
        if shape != .object {
            shape = .object
            members = []
            members.reserveCapacity(8)
        }
    }

    func becomeArray() {
        if shape != .array {
            shape = .array
            elements = []
        }
    }
}

private struct NodeEncoder: Encoder {
    let node: Node
    var codingPath: [any CodingKey] { node.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(KeyedNode<Key>(node: node))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedNode(node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleNode(node: node)
    }
}

private struct KeyedNode<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    var codingPath: [any CodingKey] { node.codingPath }

    private func add(_ key: Key, _ content: Node.Content) {
        node.members.append((key.stringValue, content))
    }

    mutating func encodeNil(forKey key: Key) throws {
        add(key, node.literal { $0.append(contentsOf: "null".utf8) })
    }

    // The concrete leaves synthesized conformances call, without a dynamic cast.
    mutating func encode(_ value: String, forKey key: Key) throws {
        add(key, node.literal { CanonicalJSON.appendString(value, to: &$0) })
    }

    mutating func encode(_ value: Int64, forKey key: Key) throws {
        add(key, node.literal { CanonicalJSON.appendInteger(value, to: &$0) })
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        add(key, node.literal { CanonicalJSON.appendInteger(Int64(value), to: &$0) })
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        add(key, node.literal { $0.append(contentsOf: (value ? "true" : "false").utf8) })
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        add(key, try node.content(value, key: key))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested = Node(arena: node.arena, parent: node, key: key)
        nested.becomeObject()
        add(key, .node(nested))
        return KeyedEncodingContainer(KeyedNode<NestedKey>(node: nested))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = Node(arena: node.arena, parent: node, key: key)
        nested.becomeArray()
        add(key, .node(nested))
        return UnkeyedNode(node: nested)
    }

    mutating func superEncoder() -> any Encoder {
        let key = Key(stringValue: "super")!
        let nested = Node(arena: node.arena, parent: node, key: key)
        add(key, .node(nested))
        return NodeEncoder(node: nested)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let nested = Node(arena: node.arena, parent: node, key: key)
        add(key, .node(nested))
        return NodeEncoder(node: nested)
    }
}

private struct ElementKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedNode: UnkeyedEncodingContainer {
    let node: Node
    var codingPath: [any CodingKey] { node.codingPath }
    var count: Int { node.elements.count }

    mutating func encodeNil() throws {
        node.elements.append(node.literal { $0.append(contentsOf: "null".utf8) })
    }

    mutating func encode(_ value: String) throws {
        node.elements.append(node.literal { CanonicalJSON.appendString(value, to: &$0) })
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        node.elements.append(try node.content(value, key: ElementKey(count)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested = Node(arena: node.arena, parent: node, key: ElementKey(count))
        nested.becomeObject()
        node.elements.append(.node(nested))
        return KeyedEncodingContainer(KeyedNode<NestedKey>(node: nested))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = Node(arena: node.arena, parent: node, key: ElementKey(count))
        nested.becomeArray()
        node.elements.append(.node(nested))
        return UnkeyedNode(node: nested)
    }

    mutating func superEncoder() -> any Encoder {
        let nested = Node(arena: node.arena, parent: node, key: ElementKey(count))
        node.elements.append(.node(nested))
        return NodeEncoder(node: nested)
    }
}

private struct SingleNode: SingleValueEncodingContainer {
    let node: Node
    var codingPath: [any CodingKey] { node.codingPath }

    private func set(_ content: Node.Content) {
        node.shape = .single
        node.elements = [content]
    }

    mutating func encodeNil() throws {
        set(node.literal { $0.append(contentsOf: "null".utf8) })
    }

    mutating func encode(_ value: String) throws {
        set(node.literal { CanonicalJSON.appendString(value, to: &$0) })
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        if let leaf = try node.leaf(value, key: nil) {
            set(.leaf(leaf))
            return
        }
        // A wrapper that encodes another value as its own: that value's content is this node's.
        let inner = Node(arena: node.arena, parent: node.parent, key: node.key)
        try inner.store(value)
        set(.node(inner))
    }
}

/// A value that writes its own canonical JSON, exactly as `CanonicalEncoder` would write its
/// `Encodable` form (a test of each conformance must hold the two together). The standard
/// library's leaf types conform; so may a hot type, where the generic containers' dynamic
/// dispatch per field costs more than the rest of appending it.
public protocol CanonicalJSONWritable: Encodable {
    func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal)
}

/// Why a value has no canonical JSON form; the encoder reports it with the coding path.
public struct CanonicalJSONRefusal: Error {
    public let reason: String

    public init(reason: String) {
        self.reason = reason
    }
}

extension String: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        CanonicalJSON.appendString(self, to: &out)
    }
}

extension Bool: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        out.append(contentsOf: (self ? "true" : "false").utf8)
    }
}

/// Integers of every width: plain decimal when they fit in 64 signed bits.
public protocol CanonicalJSONInteger: CanonicalJSONWritable, BinaryInteger {}

extension CanonicalJSONInteger {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        guard let exact = Int64(exactly: self) else {
            throw CanonicalJSONRefusal(reason: "\(self) does not fit in 64 signed bits")
        }
        CanonicalJSON.appendInteger(exact, to: &out)
    }
}

extension Int: CanonicalJSONInteger {}
extension Int8: CanonicalJSONInteger {}
extension Int16: CanonicalJSONInteger {}
extension Int32: CanonicalJSONInteger {}
extension Int64: CanonicalJSONInteger {}
extension UInt: CanonicalJSONInteger {}
extension UInt8: CanonicalJSONInteger {}
extension UInt16: CanonicalJSONInteger {}
extension UInt32: CanonicalJSONInteger {}
extension UInt64: CanonicalJSONInteger {}

/// Floating-point numbers are refused: events and payloads hold none, and RFC 8785's
/// shortest round-trip form is not worth having for that.
extension Double: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        throw CanonicalJSONRefusal(reason: "floating-point numbers have no canonical form here")
    }
}

extension Float: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        throw CanonicalJSONRefusal(reason: "floating-point numbers have no canonical form here")
    }
}
