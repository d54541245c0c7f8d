import StrataCore

/// A command body as a client sends it (CONTRACT.md "Commands"):
/// `{"id","type","actor","payload":{…},"expectedVersion"?,"correlationId"?}`.
///
/// Reading it checks only the body's own fields; everything about the payload's content
/// is the domain's to judge (INVALID), a number the payload cannot hold included.
public struct CommandBody: RequestGate.Body, Equatable {
    /// The body's fields. A list, not a set: every body's names are checked against it, and
    /// comparing a short name with six costs less than hashing it.
    public static let fields = ["id", "type", "actor", "payload", "expectedVersion", "correlationId"]

    package static func isField(_ key: String) -> Bool { fields.contains(key) }

    public var id: String
    public var type: String
    public var actor: String
    public var payload: [String: JSONValue]
    public var expectedVersion: Int64?
    public var correlationId: String?
    /// The numbers in the payload that JSON allows and `JSONValue` cannot hold (a fraction, an
    /// exponent, an integer beyond 64 bits), their paths from the payload: `null` stands in
    /// `payload` where each was, and the command's rules name its field (`Command.parse`).
    public var payloadNumbers: [JSONParser.UnrepresentableNumber] { notedNumbers ?? [] }
    /// Nil, not empty, for the body that has none (nearly all): a body is copied several times
    /// on its way to the writer, and each copy of an empty array retains and releases it.
    private var notedNumbers: [JSONParser.UnrepresentableNumber]?

    public var requestId: String? { id }

    public init(
        id: String, type: String, actor: String, payload: [String: JSONValue], expectedVersion: Int64? = nil,
        correlationId: String? = nil, payloadNumbers: [JSONParser.UnrepresentableNumber] = []
    ) {
        self.init(
            id: id, type: type, actor: actor, payload: payload, expectedVersion: expectedVersion,
            correlationId: correlationId, notedNumbers: payloadNumbers.isEmpty ? nil : payloadNumbers)
    }

    private init(
        id: String, type: String, actor: String, payload: [String: JSONValue], expectedVersion: Int64?,
        correlationId: String?, notedNumbers: [JSONParser.UnrepresentableNumber]?
    ) {
        self.id = id
        self.type = type
        self.actor = actor
        self.payload = payload
        self.expectedVersion = expectedVersion
        self.correlationId = correlationId
        self.notedNumbers = notedNumbers
    }

    /// The body as JSON, the way a client would send it.
    public var json: [UInt8] {
        var members: [String: JSONValue] = [
            "id": .string(id), "type": .string(type), "actor": .string(actor), "payload": .object(payload),
        ]
        if let expectedVersion { members["expectedVersion"] = .integer(expectedVersion) }
        if let correlationId { members["correlationId"] = .string(correlationId) }
        return CanonicalJSON.bytes(.object(members))
    }

    /// Reads a body: strict JSON (valid UTF-8, no duplicate keys, nesting ≤ 64), an object
    /// with a command id and an actor of 1–64 of `[A-Za-z0-9_-]` each, a string `type`, an object
    /// `payload`, an optional integer `expectedVersion` ≥ 0 and an optional `correlationId` of
    /// at most 128 characters, and no other field. A number JSON allows and `JSONValue` cannot
    /// hold is a value of the wrong type in the body's own fields, and in the payload one of
    /// `payloadNumbers`.
    public static func parse(_ bytes: [UInt8]) -> Result<CommandBody, RequestGate.BodyProblem> {
        let value: JSONValue
        let numbers: [JSONParser.UnrepresentableNumber]
        do {
            (value, numbers) = try JSONParser.parseNotingNumbers(bytes)
        } catch {
            return .failure(malformed(nil, "BODY_NOT_JSON", "the body is not strict JSON: \(error)"))
        }
        guard case .object(let members) = value else {
            return .failure(malformed(nil, "BODY_NOT_OBJECT", "the body is not a JSON object"))
        }
        let id = members["id"]?.stringValue
        guard let id, Identifier.isValid(id) else {
            return .failure(
                malformed(nil, "INVALID_COMMAND_ID", "\"id\" must be 1–64 characters of [A-Za-z0-9_-]"))
        }
        // The first unknown field by name, found in one pass without hashing each name again.
        var unknown: String?
        for key in members.keys where !isField(key) {
            if let found = unknown, found < key { continue }
            unknown = key
        }
        if let unknown {
            return .failure(malformed(id, "UNKNOWN_BODY_FIELD", "the body has a field \"\(unknown)\" it does not define"))
        }
        guard let type = members["type"]?.stringValue else {
            return .failure(malformed(id, "INVALID_TYPE_FIELD", "\"type\" must be a string"))
        }
        // A user id, as the command id is an id: anything else names nobody, and would be
        // journaled as who tried a command (an empty actor, 60 KB of text).
        guard let actor = members["actor"]?.stringValue, Identifier.isValid(actor) else {
            return .failure(
                malformed(id, "INVALID_ACTOR_FIELD", "\"actor\" must be a user id: 1–64 characters of [A-Za-z0-9_-]"))
        }
        guard case .object(let payload)? = members["payload"] else {
            return .failure(malformed(id, "INVALID_PAYLOAD_FIELD", "\"payload\" must be an object"))
        }
        // The optional fields read `null` as absent, but not the `null` standing for a number:
        // that is a value of the wrong type, as in the fields that take no `null`.
        var expectedVersion: Int64?
        if let value = members["expectedVersion"], value != .null || isNumber("expectedVersion", numbers) {
            guard let version = value.integerValue, version >= 0 else {
                return .failure(
                    malformed(id, "INVALID_EXPECTED_VERSION", "\"expectedVersion\" must be an integer ≥ 0"))
            }
            expectedVersion = version
        }
        var correlationId: String?
        if let value = members["correlationId"], value != .null || isNumber("correlationId", numbers) {
            guard let text = value.stringValue, (1...128).contains(text.utf8.count) else {
                return .failure(
                    malformed(id, "INVALID_CORRELATION_ID", "\"correlationId\" must be a string of 1–128 bytes"))
            }
            correlationId = text
        }
        return .success(
            CommandBody(
                id: id, type: type, actor: actor, payload: payload, expectedVersion: expectedVersion,
                correlationId: correlationId, notedNumbers: numbers.isEmpty ? nil : fromThePayload(numbers)))
    }

    /// The numbers' paths from the payload: every number outside it stood in a field refused.
    private static func fromThePayload(
        _ numbers: [JSONParser.UnrepresentableNumber]
    ) -> [JSONParser.UnrepresentableNumber] {
        numbers.map { number in
            assert(number.path.count > 1 && number.path[0] == .key("payload"), "a number outside the payload")
            return JSONParser.UnrepresentableNumber(kind: number.kind, path: Array(number.path.dropFirst()))
        }
    }

    /// Whether a number the parser could not hold stood as the body's member `field`.
    private static func isNumber(_ field: String, _ numbers: [JSONParser.UnrepresentableNumber]) -> Bool {
        numbers.contains { $0.path == [.key(field)] }
    }

    private static func malformed(_ id: String?, _ reason: String, _ message: String) -> RequestGate.BodyProblem {
        RequestGate.BodyProblem(id: id, error: StrataError(.malformed, reason: reason, message))
    }
}
