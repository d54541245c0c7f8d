/// The one error family of Strata. Its codes are the contract's error codes, so an
/// error raised anywhere maps to exactly one reply a client understands.
public struct StrataError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    public enum Code: String, Sendable, Codable, CaseIterable {
        case malformed = "MALFORMED"
        case unauthenticated = "UNAUTHENTICATED"
        case forbidden = "FORBIDDEN"
        case invalid = "INVALID"
        case notFound = "NOT_FOUND"
        case conflict = "CONFLICT"
        case rejected = "REJECTED"
        case tooLarge = "TOO_LARGE"
        case unavailable = "UNAVAILABLE"
        case `internal` = "INTERNAL"
    }

    /// One problem with one field, for INVALID (every problem is listed at once).
    public struct FieldProblem: Sendable, Equatable, Codable, CustomStringConvertible {
        public let field: String
        public let reason: String

        public init(field: String, reason: String) {
            self.field = field
            self.reason = reason
        }

        public var description: String { "\(field): \(reason)" }
    }

    public let code: Code
    /// A stable UPPER_SNAKE identifier (LOAN_NOT_PENDING, WRONG_EXPECTED_VERSION, ...).
    public let reason: String?
    /// For people; may change between versions, unlike `code` and `reason`.
    public let message: String
    public let details: [FieldProblem]?

    public init(_ code: Code, reason: String? = nil, _ message: String, details: [FieldProblem]? = nil) {
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
    }

    public var description: String {
        var text = code.rawValue
        if let reason { text += " \(reason)" }
        text += ": \(message)"
        if let details, !details.isEmpty { text += " [" + details.map(\.description).joined(separator: "; ") + "]" }
        return text
    }

    /// The error as the contract's JSON object `{"code","reason","message","details"}`.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["code": .string(code.rawValue), "message": .string(message)]
        if let reason { members["reason"] = .string(reason) }
        if let details {
            members["details"] = .array(details.map { .object(["field": .string($0.field), "reason": .string($0.reason)]) })
        }
        return .object(members)
    }

    public init?(json: JSONValue) {
        guard let codeText = json["code"]?.stringValue, let code = Code(rawValue: codeText),
            let message = json["message"]?.stringValue
        else { return nil }
        var details: [FieldProblem]?
        if let value = json["details"] {
            guard let list = value.arrayValue else { return nil }
            var problems: [FieldProblem] = []
            for item in list {
                guard let field = item["field"]?.stringValue, let reason = item["reason"]?.stringValue else { return nil }
                problems.append(FieldProblem(field: field, reason: reason))
            }
            details = problems
        }
        self.init(code, reason: json["reason"]?.stringValue, message, details: details)
    }
}
