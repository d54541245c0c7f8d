/// Encodes any `Encodable` straight into a `JSONValue`, with no JSON text in between:
/// the canonical writer then prints it once. (Going through Foundation's encoder meant
/// writing the text, parsing it back and writing it again: most of the cost of
/// appending an event.)
///
/// What it produces is what Foundation's `JSONEncoder` followed by `JSONParser` produced:
/// optionals encoded with `encodeIfPresent` are omitted when nil, integers of every width
/// are integers, and a floating-point number is refused with `EncodingError.invalidValue`
/// (events and payloads hold none).
public enum JSONValueEncoder {
    public static func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        let root = Slot()
        try root.store(value, codingPath: [])
        return root.resolved
    }
}

/// One place in the tree being built: a value, or an object or array still being filled.
private final class Slot {
    var value: JSONValue?
    var members: [String: Slot]?
    var elements: [Slot]?

    /// The finished value of this slot (built once, from the root, when encoding ends).
    var resolved: JSONValue {
        if let members { return .object(members.mapValues(\.resolved)) }
        if let elements { return .array(elements.map(\.resolved)) }
        return value ?? .null
    }

    func store<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        if let primitive = try Slot.primitive(value, codingPath: codingPath) {
            self.value = primitive
            return
        }
        try value.encode(to: TreeEncoder(slot: self, codingPath: codingPath))
        // A type that encoded nothing at all is an empty object, as with JSONEncoder.
        if self.value == nil && members == nil && elements == nil { members = [:] }
    }

    /// The JSON of the standard library's leaf types, without a container round trip.
    static func primitive<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> JSONValue? {
        switch value {
        case let text as String: return .string(text)
        case let flag as Bool: return .bool(flag)
        case let number as Int: return .integer(Int64(number))
        case let number as Int64: return .integer(number)
        case let number as Int32: return .integer(Int64(number))
        case let number as Int16: return .integer(Int64(number))
        case let number as Int8: return .integer(Int64(number))
        case let number as UInt8: return .integer(Int64(number))
        case let number as UInt16: return .integer(Int64(number))
        case let number as UInt32: return .integer(Int64(number))
        case let number as UInt: return try integer(number, codingPath)
        case let number as UInt64: return try integer(number, codingPath)
        case is Double, is Float:
            throw EncodingError.invalidValue(
                value, .init(codingPath: codingPath, debugDescription: "floating-point numbers have no canonical form here"))
        default: return nil
        }
    }

    static func integer(_ number: some BinaryInteger, _ codingPath: [any CodingKey]) throws -> JSONValue {
        guard let exact = Int64(exactly: number) else {
            throw EncodingError.invalidValue(
                number, .init(codingPath: codingPath, debugDescription: "\(number) does not fit in 64 signed bits"))
        }
        return .integer(exact)
    }
}

private struct TreeEncoder: Encoder {
    let slot: Slot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if slot.members == nil { slot.members = [:] }
        return KeyedEncodingContainer(KeyedSlot<Key>(slot: slot, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if slot.elements == nil { slot.elements = [] }
        return UnkeyedSlot(slot: slot, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleSlot(slot: slot, codingPath: codingPath)
    }
}

private struct KeyedSlot<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: Slot
    let codingPath: [any CodingKey]

    private func child(_ key: Key) -> Slot {
        let child = Slot()
        slot.members![key.stringValue] = child
        return child
    }

    mutating func encodeNil(forKey key: Key) throws { child(key).value = .null }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try child(key).store(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested = child(key)
        nested.members = [:]
        return KeyedEncodingContainer(KeyedSlot<NestedKey>(slot: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = child(key)
        nested.elements = []
        return UnkeyedSlot(slot: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        TreeEncoder(slot: child(Key(stringValue: "super")!), codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        TreeEncoder(slot: child(key), codingPath: codingPath + [key])
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedSlot: UnkeyedEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]
    var count: Int { slot.elements!.count }

    private func next() -> Slot {
        let element = Slot()
        slot.elements!.append(element)
        return element
    }

    mutating func encodeNil() throws { next().value = .null }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = codingPath + [IndexKey(count)]
        try next().store(value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
        -> KeyedEncodingContainer<NestedKey>
    {
        let path = codingPath + [IndexKey(count)]
        let nested = next()
        nested.members = [:]
        return KeyedEncodingContainer(KeyedSlot<NestedKey>(slot: nested, codingPath: path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let path = codingPath + [IndexKey(count)]
        let nested = next()
        nested.elements = []
        return UnkeyedSlot(slot: nested, codingPath: path)
    }

    mutating func superEncoder() -> any Encoder {
        let path = codingPath + [IndexKey(count)]
        return TreeEncoder(slot: next(), codingPath: path)
    }
}

private struct SingleSlot: SingleValueEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { slot.value = .null }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try slot.store(value, codingPath: codingPath)
    }
}
