/// Why a byte sequence is not a JSON document Strata accepts.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case invalidUTF8 = "INVALID_UTF8"
        case unexpectedEnd = "UNEXPECTED_END"
        case unexpectedCharacter = "UNEXPECTED_CHARACTER"
        case invalidEscape = "INVALID_ESCAPE"
        case controlCharacterInString = "CONTROL_CHARACTER_IN_STRING"
        case fractionalNumber = "FRACTIONAL_NUMBER"
        case numberOutOfRange = "NUMBER_OUT_OF_RANGE"
        case duplicateKey = "DUPLICATE_KEY"
        case tooDeep = "TOO_DEEP"
        case trailingCharacters = "TRAILING_CHARACTERS"
    }

    public let reason: Reason
    /// Byte offset in the input where the problem was found.
    public let offset: Int

    public var description: String { "\(reason.rawValue) at byte \(offset)" }
}

/// A strict RFC 8259 parser into `JSONValue`.
///
/// Strict where it matters for signed, hashed data: invalid UTF-8, duplicate keys,
/// lone surrogates, fractional or out-of-range numbers and trailing bytes are refused,
/// and nesting is bounded so hostile input cannot exhaust the stack. Only
/// `parseNotingNumbers` takes such numbers, and it leaves them out of the value it returns.
public struct JSONParser {
    public static let defaultMaximumDepth = 64

    /// A number JSON allows that `JSONValue` cannot hold, found by `parseNotingNumbers`.
    public struct UnrepresentableNumber: Sendable, Hashable {
        public enum Kind: Sendable, Hashable {
            /// A fraction or an exponent (`12.5`, `1.0`, `1e3`): Strata's numbers are integers,
            /// written as integers.
            case notAnInteger
            /// An integer above `Int64.max`.
            case aboveInt64
            /// An integer below `Int64.min`.
            case belowInt64
        }

        /// One step from a container to a value in it.
        public enum Step: Sendable, Hashable {
            case key(String)
            case index(Int)
        }

        public var kind: Kind
        /// Where the number stands: the keys and indices from the document's root, outermost first.
        public var path: [Step]

        public init(kind: Kind, path: [Step]) {
            self.kind = kind
            self.path = path
        }
    }

    public static func parse(_ bytes: some Collection<UInt8>, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError)
        -> JSONValue
    {
        try parse(Array(bytes), maximumDepth: maximumDepth, notingNumbers: false).value
    }

    public static func parse(_ text: String, maximumDepth: Int = defaultMaximumDepth) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }

    /// Parses as `parse` does, except that a number JSON allows but `JSONValue` cannot hold
    /// (a fraction, an exponent, an integer beyond 64 bits) is not a fault of the document:
    /// `null` stands in its place, and `numbers` lists each, in document order, with where it
    /// stood. For documents whose values are judged field by field (a command's payload),
    /// where such a number is a problem of its field that the reply should name.
    public static func parseNotingNumbers(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth)
        throws(JSONParseError) -> (value: JSONValue, numbers: [UnrepresentableNumber])
    {
        try parse(bytes, maximumDepth: maximumDepth, notingNumbers: true)
    }

    private static func parse(_ bytes: [UInt8], maximumDepth: Int, notingNumbers: Bool) throws(JSONParseError)
        -> (value: JSONValue, numbers: [UnrepresentableNumber])
    {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth, notingNumbers: notingNumbers)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error(.trailingCharacters) }
        guard !parser.numbers.isEmpty else { return (value, []) }
        // Each path was written from the number outwards, as the containers closed.
        return (value, parser.numbers.map { UnrepresentableNumber(kind: $0.kind, path: $0.path.reversed()) })
    }

    /// The members of a document that is an object of at most `limit` members, in the order
    /// written, without making its dictionary; nil for anything else, including what `parse`
    /// refuses (a repeated key among them). For a small fixed shape read on every request (a
    /// request's header), where comparing a handful of names costs less than hashing each
    /// into a table and looking each up again.
    public static func members(of bytes: [UInt8], limit: Int) -> [(key: String, value: JSONValue)]? {
        var parser = JSONParser(bytes: bytes, maximumDepth: defaultMaximumDepth, notingNumbers: false)
        parser.skipWhitespace()
        guard parser.index < bytes.count, bytes[parser.index] == UInt8(ascii: "{"),
            (try? parser.readMembers(depth: 1)) != nil
        else { return nil }
        parser.skipWhitespace()
        let members = parser.members
        guard parser.index == bytes.count, members.count <= limit else { return nil }
        for later in members.indices {
            for earlier in 0..<later where members[earlier].key == members[later].key { return nil }
        }
        return members.map { ($0.key, $0.value) }
    }

    private let bytes: [UInt8]
    private let maximumDepth: Int
    private var index = 0
    /// The members read so far of the objects being parsed, innermost last. An object's
    /// dictionary is made once its members are all read, at its final size: grown member by
    /// member, it was rehashed at every doubling: a third of the cost of parsing a request.
    private var members: [(key: String, keyOffset: Int, value: JSONValue)] = []
    /// Whether a number `JSONValue` cannot hold is noted (and `null` put in its place) rather
    /// than refused.
    private let notingNumbers: Bool
    /// The numbers noted so far, each path innermost step first: a step is added as each
    /// container around the number finishes reading it, so that reading a document without
    /// such numbers costs one comparison of a count per value.
    private var numbers: [UnrepresentableNumber] = []

    private init(bytes: [UInt8], maximumDepth: Int, notingNumbers: Bool) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.notingNumbers = notingNumbers
    }

    private func error(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(reason: reason, offset: index)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw error(.unexpectedEnd) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error(.unexpectedCharacter)
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error(.unexpectedEnd) }
        let start = literal.utf8Start
        for i in 0..<count where bytes[index + i] != start[i] {
            index += i
            throw error(.unexpectedCharacter)
        }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        let first = members.count
        defer { members.removeSubrange(first...) }
        try readMembers(depth: depth)
        return .object(try object(from: first))
    }

    /// Reads the object at `index` (its opening brace) through its closing brace, appending
    /// its members to `members`.
    private mutating func readMembers(depth: Int) throws(JSONParseError) {
        guard depth <= maximumDepth else { throw error(.tooDeep) }
        index += 1  // {
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd) }
            guard bytes[index] == UInt8(ascii: "\"") else { throw error(.unexpectedCharacter) }
            let keyOffset = index
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd) }
            guard bytes[index] == UInt8(ascii: ":") else { throw error(.unexpectedCharacter) }
            index += 1
            skipWhitespace()
            let noted = numbers.count
            let value = try parseValue(depth: depth)
            if numbers.count != noted { locate(from: noted, in: .key(key)) }
            members.append((key, keyOffset, value))
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd) }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return
            default: throw error(.unexpectedCharacter)
            }
        }
    }

    /// The dictionary of the members from `first` on; a repeated key is refused at its second
    /// appearance (the first such by position).
    private func object(from first: Int) throws(JSONParseError) -> [String: JSONValue] {
        var object = [String: JSONValue](minimumCapacity: members.count - first)
        for member in members[first...] {
            guard object.updateValue(member.value, forKey: member.key) == nil else {
                throw JSONParseError(reason: .duplicateKey, offset: member.keyOffset)
            }
        }
        return object
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maximumDepth else { throw error(.tooDeep) }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            let noted = numbers.count
            let value = try parseValue(depth: depth)
            if numbers.count != noted { locate(from: noted, in: .index(elements.count)) }
            elements.append(value)
            skipWhitespace()
            guard index < bytes.count else { throw error(.unexpectedEnd) }
            switch bytes[index] {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(elements)
            default: throw error(.unexpectedCharacter)
            }
        }
    }

    /// Adds `step` to the paths of the numbers noted from `first` on, all within the value
    /// just read at that step.
    private mutating func locate(from first: Int, in step: UnrepresentableNumber.Step) {
        for i in first..<numbers.count { numbers[i].path.append(step) }
    }

    /// An integer within 64 bits; anything else JSON allows is refused, or noted with `null`
    /// in its place when `notingNumbers`.
    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count else { throw error(.unexpectedEnd) }
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { throw error(.unexpectedCharacter) }
        if bytes[index] == UInt8(ascii: "0"), index + 1 < bytes.count,
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index + 1])
        {
            index += 1
            throw error(.unexpectedCharacter)  // leading zeros are not JSON
        }
        // Accumulate negatively so Int64.min parses.
        var value: Int64 = 0
        var overflow = false
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let digit = Int64(bytes[index] - UInt8(ascii: "0"))
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.subtractingReportingOverflow(digit)
            overflow = overflow || o1 || o2
            value = s
            index += 1
        }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            guard notingNumbers else { throw JSONParseError(reason: .fractionalNumber, offset: start) }
            try skipFractionAndExponent()
            return noteNumber(.notAnInteger)
        }
        if overflow || (!negative && value == Int64.min) {
            guard notingNumbers else { throw JSONParseError(reason: .numberOutOfRange, offset: start) }
            return noteNumber(negative ? .belowInt64 : .aboveInt64)
        }
        return .integer(negative ? value : -value)
    }

    /// Reads the rest of a number after its integer digits, as JSON's grammar has it: an
    /// optional `.` and digits, then an optional `e` or `E`, sign and digits.
    private mutating func skipFractionAndExponent() throws(JSONParseError) {
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            try skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            try skipDigits()
        }
    }

    /// Reads one or more digits.
    private mutating func skipDigits() throws(JSONParseError) {
        guard index < bytes.count else { throw error(.unexpectedEnd) }
        guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { throw error(.unexpectedCharacter) }
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
    }

    private mutating func noteNumber(_ kind: UnrepresentableNumber.Kind) -> JSONValue {
        numbers.append(UnrepresentableNumber(kind: kind, path: []))
        return .null
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Most strings have no escape: check their bytes (UTF-8, no control character) and
        // make the String from them in one go. At the first escape, start again below.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let end = index
                index += 1
                return bytes.withUnsafeBufferPointer { buffer in
                    String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<end]), as: UTF8.self)
                }
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error(.controlCharacterInString) }
            if byte < 0x80 {
                index += 1
            } else {
                _ = try decodeUTF8Scalar()
            }
        }
        index = start
        var scalars = String.UnicodeScalarView()
        while true {
            guard index < bytes.count else { throw error(.unexpectedEnd) }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(scalars)
            case UInt8(ascii: "\\"):
                scalars.append(try parseEscape())
            case 0x00..<0x20:
                throw error(.controlCharacterInString)
            case 0x00..<0x80:
                scalars.append(Unicode.Scalar(byte))
                index += 1
            default:
                scalars.append(try decodeUTF8Scalar())
            }
        }
    }

    private mutating func parseEscape() throws(JSONParseError) -> Unicode.Scalar {
        index += 1  // backslash
        guard index < bytes.count else { throw error(.unexpectedEnd) }
        let c = bytes[index]
        index += 1
        switch c {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let first = try parseHex4()
            if (0xD800..<0xDC00).contains(first) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw error(.invalidEscape) }
                index += 2
                let second = try parseHex4()
                guard (0xDC00..<0xE000).contains(second) else { throw error(.invalidEscape) }
                let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else { throw error(.invalidEscape) }
                return scalar
            }
            guard let scalar = Unicode.Scalar(first) else { throw error(.invalidEscape) }  // lone low surrogate
            return scalar
        default:
            index -= 1
            throw error(.invalidEscape)
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error(.unexpectedEnd) }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw error(.invalidEscape)
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// Decodes one multi-byte UTF-8 sequence, refusing overlong forms and surrogates.
    private mutating func decodeUTF8Scalar() throws(JSONParseError) -> Unicode.Scalar {
        let lead = bytes[index]
        let length: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; value = UInt32(lead & 0x1F)
        case 0xE0...0xEF: length = 3; value = UInt32(lead & 0x0F)
        case 0xF0...0xF4: length = 4; value = UInt32(lead & 0x07)
        default: throw error(.invalidUTF8)
        }
        guard index + length <= bytes.count else { throw error(.invalidUTF8) }
        for i in 1..<length {
            let b = bytes[index + i]
            guard b & 0xC0 == 0x80 else { throw error(.invalidUTF8) }
            value = value << 6 | UInt32(b & 0x3F)
        }
        let minimum: UInt32 = length == 2 ? 0x80 : length == 3 ? 0x800 : 0x10000
        guard value >= minimum, value <= 0x10FFFF, let scalar = Unicode.Scalar(value) else { throw error(.invalidUTF8) }
        index += length
        return scalar
    }
}
