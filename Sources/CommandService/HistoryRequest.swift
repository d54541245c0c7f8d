import EventStore
import StrataCore

/// A request on the history endpoint (CONTRACT.md "History"):
/// `{"after":<position>,"limit":<1..10000>,"categories":["loan",…],"open":true}`; `limit`
/// defaults to 1,000, `categories` to every category, and `open` to false. `open` asks for
/// the sealed personal data of the page opened beside it, which needs a key with the
/// `personal-data` scope.
///
/// The body's own fields missing or of the wrong type are MALFORMED (`parse`); values out
/// of range are INVALID, with every problem listed, as for commands (`problem`). A number
/// `after` or `limit` cannot hold (a fraction, an exponent, beyond 64 bits) is of the wrong
/// type, as in a command's own fields, and the optional members read `null` as absent, as
/// those do.
public struct HistoryRequest: RequestGate.Body, Equatable {
    public static let fields: Set<String> = ["after", "limit", "categories", "open"]
    public static let maximumLimit: Int64 = 10_000
    public static let defaultLimit: Int64 = 1_000

    public var after: Int64
    public var limit: Int64
    /// Nil: every category.
    public var categories: [String]?
    /// Open the page's sealed personal data, beside the events.
    public var open: Bool

    public var requestId: String? { nil }

    public init(
        after: Int64, limit: Int64 = HistoryRequest.defaultLimit, categories: [String]? = nil, open: Bool = false
    ) {
        self.after = after
        self.limit = limit
        self.categories = categories
        self.open = open
    }

    public var filter: EventFilter { categories.map { .categories($0) } ?? .all }

    /// The request as JSON, the way a client would send it.
    public var json: [UInt8] {
        var members: [String: JSONValue] = ["after": .integer(after), "limit": .integer(limit)]
        if let categories { members["categories"] = .array(categories.map { .string($0) }) }
        if open { members["open"] = .bool(true) }
        return CanonicalJSON.bytes(.object(members))
    }

    public static func parse(_ bytes: [UInt8]) -> Result<HistoryRequest, RequestGate.BodyProblem> {
        func malformed(_ reason: String, _ message: String) -> Result<HistoryRequest, RequestGate.BodyProblem> {
            .failure(RequestGate.BodyProblem(id: nil, error: StrataError(.malformed, reason: reason, message)))
        }
        // Such a number is read as a `null` in its place and noted in `numbers`: the refusal
        // names the field it stood in rather than calling the body not JSON.
        guard let (value, numbers) = try? JSONParser.parseNotingNumbers(bytes) else {
            return malformed("BODY_NOT_JSON", "the body is not strict JSON")
        }
        guard case .object(let members) = value else { return malformed("BODY_NOT_OBJECT", "the body is not a JSON object") }
        if let unknown = members.keys.filter({ !fields.contains($0) }).sorted().first {
            return malformed("UNKNOWN_BODY_FIELD", "the body has a field \"\(unknown)\" it does not define")
        }
        guard let after = members["after"]?.integerValue else {
            return malformed("INVALID_AFTER_FIELD", "\"after\" must be an integer position")
        }
        // An optional member that is `null` is absent, as in a command's body, so that a client
        // writes its optional fields the same way on both endpoints; the `null` standing for a
        // number is not, and is refused as the wrong type.
        func given(_ field: String) -> JSONValue? {
            guard let value = members[field] else { return nil }
            guard value == .null, !numbers.contains(where: { $0.path == [.key(field)] }) else { return value }
            return nil
        }
        var limit = defaultLimit
        if let value = given("limit") {
            guard let number = value.integerValue else { return malformed("INVALID_LIMIT_FIELD", "\"limit\" must be an integer") }
            limit = number
        }
        var categories: [String]?
        if let value = given("categories") {
            guard let items = value.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
                return malformed("INVALID_CATEGORIES_FIELD", "\"categories\" must be an array of strings")
            }
            categories = items.compactMap(\.stringValue)
        }
        var open = false
        if let value = given("open") {
            guard let flag = value.boolValue else {
                return malformed("INVALID_OPEN_FIELD", "\"open\" must be true or false")
            }
            open = flag
        }

        return .success(HistoryRequest(after: after, limit: limit, categories: categories, open: open))
    }

    /// The values' problems, all of them (INVALID), or nil. Checked after the gate, so an
    /// unsigned request is UNAUTHENTICATED whatever it asks for.
    public var problem: StrataError? {
        var problems: [StrataError.FieldProblem] = []
        if after < 0 { problems.append(.init(field: "after", reason: "OUT_OF_RANGE")) }
        if !(1...HistoryRequest.maximumLimit).contains(limit) {
            problems.append(.init(field: "limit", reason: "OUT_OF_RANGE"))
        }
        if let categories {
            if categories.isEmpty { problems.append(.init(field: "categories", reason: "EMPTY")) }
            for (index, category) in categories.enumerated() where !StreamName.isValidCategory(category) {
                problems.append(.init(field: "categories[\(index)]", reason: "INVALID_FORMAT"))
            }
        }
        guard let first = problems.first else { return nil }
        return StrataError(
            .invalid, reason: first.reason,
            "after must be ≥ 0, limit 1–\(HistoryRequest.maximumLimit), categories 1–32 lowercase letters each",
            details: problems)
    }
}
