import Events
import StrataCore

/// Reads a command's payload field by field and collects **every** problem, each as
/// `{field, reason}`, so that one INVALID reply lists them all.
///
/// Field names in problems are paths: `principalCents`, `customer.name`,
/// `lines[2].taxRateBp`. A JSON `null` in a field the command defines reads as absent.
/// Fields the command does not define are problems (UNKNOWN_FIELD), whatever their value:
/// a misspelt optional field must not be silently ignored.
///
/// A number JSON allows that the payload cannot hold (a fraction, an exponent, an integer
/// beyond 64 bits) comes as a `null` with a note of where it stood, and is judged as an
/// integer in its place would be (WRONG_TYPE where the field is not a number, UNKNOWN_FIELD
/// where there is no such field), except where an integer is read: there a fraction or an
/// exponent is NOT_AN_INTEGER, and an integer beyond 64 bits has the reason of any number
/// beyond that end of the field's range.
public struct PayloadReader {
    /// Stable reasons for INVALID details.
    public enum Reason {
        public static let required = "REQUIRED"
        public static let wrongType = "WRONG_TYPE"
        public static let notAnInteger = "NOT_AN_INTEGER"
        public static let unknownField = "UNKNOWN_FIELD"
        public static let invalidIdentifier = "INVALID_IDENTIFIER"
        public static let invalidFormat = "INVALID_FORMAT"
        public static let empty = "EMPTY"
        public static let tooLong = "TOO_LONG"
        public static let controlCharacter = "CONTROL_CHARACTER"
        public static let unknownValue = "UNKNOWN_VALUE"
        public static let outOfRange = "OUT_OF_RANGE"
        public static let mustBePositive = "MUST_BE_POSITIVE"
        public static let aboveMaximum = "ABOVE_MAXIMUM"
        public static let futureDate = "FUTURE_DATE"
        public static let tooFarInPast = "TOO_FAR_IN_PAST"
        public static let noChanges = "NO_CHANGES"
    }

    public let context: DecisionContext
    private let fields: [String: JSONValue]
    private let prefix: String
    /// The payload's numbers that a `null` stands for, by field path (`prefix` and key); nil
    /// when it had none, as nearly every payload, so that no reader retains an empty table.
    private let numbers: [String: JSONParser.UnrepresentableNumber.Kind]?
    /// The fields asked for, in order, repeats and all: a payload has a dozen fields at
    /// most, so looking through a list once in `finish` is cheaper than hashing every read.
    private var known: [String] = []
    public private(set) var problems: [StrataError.FieldProblem] = []

    public init(_ fields: [String: JSONValue], context: DecisionContext) {
        self.init(fields, context: context, prefix: "", numbers: nil)
    }

    /// A reader of a payload that held `numbers` the parser could not hold
    /// (`JSONParser.parseNotingNumbers`), with paths from the payload.
    public init(_ fields: [String: JSONValue], context: DecisionContext, numbers: [JSONParser.UnrepresentableNumber]) {
        let byField = numbers.map { (PayloadReader.field($0.path), $0.kind) }
        self.init(
            fields, context: context, prefix: "", numbers: Dictionary(byField, uniquingKeysWith: { first, _ in first }))
    }

    private init(
        _ fields: [String: JSONValue], context: DecisionContext, prefix: String,
        numbers: [String: JSONParser.UnrepresentableNumber.Kind]?
    ) {
        self.fields = fields
        self.context = context
        self.prefix = prefix
        self.numbers = numbers
    }

    /// A path from the payload as problems name fields: `customer.name`, `lines[2].taxRateBp`.
    static func field(_ path: [JSONParser.UnrepresentableNumber.Step]) -> String {
        var field = ""
        for step in path {
            switch step {
            case .key(let key): field += field.isEmpty ? key : "." + key
            case .index(let index): field += "[\(index)]"
            }
        }
        return field
    }

    /// The problem a noted number is wherever it stands, for a payload whose reader found
    /// nothing else wrong (one that never read where the number stood).
    static func problem(_ number: JSONParser.UnrepresentableNumber) -> StrataError.FieldProblem {
        StrataError.FieldProblem(
            field: field(number.path), reason: number.kind == .notAnInteger ? Reason.notAnInteger : Reason.outOfRange)
    }

    /// Records a problem with `key` (a field of this object).
    public mutating func report(_ key: String, _ reason: String) {
        problems.append(StrataError.FieldProblem(field: prefix + key, reason: reason))
    }

    /// Records UNKNOWN_FIELD for every field no read asked for. Call once, last.
    public mutating func finish() {
        let unknown = fields.keys.filter { !known.contains($0) }
        for key in unknown.sorted() { report(key, Reason.unknownField) }
    }

    /// Whether the payload carries `key` with a non-null value (without reading it); a
    /// number it could not hold counts.
    public func has(_ key: String) -> Bool {
        guard let value = fields[key] else { return false }
        return value != .null || number(key) != nil
    }

    /// The noted number a `null` at `key` stands for, if it does.
    private func number(_ key: String) -> JSONParser.UnrepresentableNumber.Kind? {
        numbers?[prefix + key]
    }

    /// The value of `key`, or nil (after reporting REQUIRED when `required`). The `null`
    /// standing for a noted number is a value, and of the wrong type for every reader but
    /// `integer`'s, which tells it apart.
    private mutating func take(_ key: String, required: Bool) -> JSONValue? {
        known.append(key)
        guard let value = fields[key], value != .null || number(key) != nil else {
            if required { report(key, Reason.required) }
            return nil
        }
        return value
    }

    // MARK: - Strings

    /// A string whose format `check` judges: it returns the reason it is wrong, or nil.
    public mutating func string(_ key: String, required: Bool = true, check: (String) -> String? = { _ in nil }) -> String? {
        guard let value = take(key, required: required) else { return nil }
        guard case .string(let text) = value else {
            report(key, Reason.wrongType)
            return nil
        }
        if let reason = check(text) {
            report(key, reason)
            return nil
        }
        return text
    }

    /// An identifier: 1–64 characters of `[A-Za-z0-9_-]`.
    public mutating func identifier(_ key: String, required: Bool = true) -> String? {
        string(key, required: required) { Identifier.isValid($0) ? nil : Reason.invalidIdentifier }
    }

    /// Free text for people: not blank, at most `maximumLength` characters, and no control
    /// characters (a line break and a tab are allowed when `multiline`).
    public mutating func text(_ key: String, maximumLength: Int, multiline: Bool = false, required: Bool = true) -> String? {
        string(key, required: required) { PayloadReader.textProblem($0, maximumLength: maximumLength, multiline: multiline) }
    }

    /// Free text typed as personal data.
    public mutating func personal(_ key: String, maximumLength: Int, multiline: Bool = false, required: Bool = true)
        -> PersonalData?
    {
        text(key, maximumLength: maximumLength, multiline: multiline, required: required).map { PersonalData($0) }
    }

    public mutating func phone(_ key: String, required: Bool = true) -> PersonalData? {
        string(key, required: required) { FieldRules.isValidPhone($0) ? nil : Reason.invalidFormat }.map { PersonalData($0) }
    }

    public mutating func email(_ key: String, required: Bool = true) -> PersonalData? {
        string(key, required: required) { FieldRules.isValidEmail($0) ? nil : Reason.invalidFormat }.map { PersonalData($0) }
    }

    static func textProblem(_ text: String, maximumLength: Int, multiline: Bool) -> String? {
        if text.unicodeScalars.allSatisfy({ $0.properties.isWhitespace }) { return Reason.empty }
        if text.count > maximumLength { return Reason.tooLong }
        let forbidden = text.unicodeScalars.contains { scalar in
            guard scalar.properties.generalCategory == .control else { return false }
            return !(multiline && (scalar == "\n" || scalar == "\t" || scalar == "\r"))
        }
        return forbidden ? Reason.controlCharacter : nil
    }

    // MARK: - Numbers, choices, dates

    /// An integer in `range`; below it `low`, above it `high` (both OUT_OF_RANGE unless given).
    public mutating func integer(
        _ key: String, in range: ClosedRange<Int64>, low: String = Reason.outOfRange, high: String = Reason.outOfRange,
        required: Bool = true
    ) -> Int64? {
        guard let value = take(key, required: required) else { return nil }
        guard case .integer(let number) = value else {
            switch value == .null ? self.number(key) : nil {
            case .notAnInteger?: report(key, Reason.notAnInteger)
            case .aboveInt64?: report(key, high)
            case .belowInt64?: report(key, low)
            case nil: report(key, Reason.wrongType)
            }
            return nil
        }
        if number < range.lowerBound {
            report(key, low)
            return nil
        }
        if number > range.upperBound {
            report(key, high)
            return nil
        }
        return number
    }

    /// An `Int` in `range` (rates, counts).
    public mutating func int(_ key: String, in range: ClosedRange<Int>, required: Bool = true) -> Int? {
        integer(key, in: Int64(range.lowerBound)...Int64(range.upperBound), required: required).map(Int.init)
    }

    /// One of an enum's UPPER_SNAKE spellings.
    public mutating func choice<Choice: RawRepresentable>(_ key: String, _: Choice.Type, required: Bool = true) -> Choice?
    where Choice.RawValue == String {
        guard let text = string(key, required: required) else { return nil }
        guard let choice = Choice(rawValue: text) else {
            report(key, Reason.unknownValue)
            return nil
        }
        return choice
    }

    /// A `YYYY-MM-DD` date, never after today (the business date of `context.now`). A future
    /// date is reported and still returned, so that checks across fields (a due date before
    /// the issue date) report their problems too: the report alone refuses the command.
    public mutating func pastDate(_ key: String, required: Bool = true) -> LocalDate? {
        guard let date = date(key, required: required) else { return nil }
        if date > context.today { report(key, Reason.futureDate) }
        return date
    }

    /// A `YYYY-MM-DD` date.
    public mutating func date(_ key: String, required: Bool = true) -> LocalDate? {
        guard let text = string(key, required: required) else { return nil }
        guard let date = LocalDate(text) else {
            report(key, Reason.invalidFormat)
            return nil
        }
        return date
    }

    // MARK: - Nested values

    /// A nested object read by `read`, whose problems are reported under `key.`.
    public mutating func object<Value>(_ key: String, required: Bool = true, _ read: (inout PayloadReader) -> Value?) -> Value? {
        guard let value = take(key, required: required) else { return nil }
        guard case .object(let members) = value else {
            report(key, Reason.wrongType)
            return nil
        }
        var nested = PayloadReader(members, context: context, prefix: prefix + key + ".", numbers: numbers)
        let result = read(&nested)
        nested.finish()
        problems += nested.problems
        return nested.problems.isEmpty ? result : nil
    }

    /// An array of objects, each read by `read`, with problems reported under `key[i].`;
    /// nil with a problem when it is not an array or its length is outside `count`.
    public mutating func objects<Value>(
        _ key: String, count: ClosedRange<Int>, tooFew: String, tooMany: String, _ read: (inout PayloadReader) -> Value?
    ) -> [Value]? {
        guard let value = take(key, required: true) else { return nil }
        guard case .array(let items) = value else {
            report(key, Reason.wrongType)
            return nil
        }
        if items.count < count.lowerBound {
            report(key, tooFew)
            return nil
        }
        if items.count > count.upperBound {
            report(key, tooMany)
            return nil
        }
        var values: [Value] = []
        var complete = true
        for (index, item) in items.enumerated() {
            let path = prefix + key + "[\(index)]"
            guard case .object(let members) = item else {
                problems.append(StrataError.FieldProblem(field: path, reason: Reason.wrongType))
                complete = false
                continue
            }
            var nested = PayloadReader(members, context: context, prefix: path + ".", numbers: numbers)
            let result = read(&nested)
            nested.finish()
            problems += nested.problems
            if let result, nested.problems.isEmpty { values.append(result) } else { complete = false }
        }
        return complete ? values : nil
    }
}
