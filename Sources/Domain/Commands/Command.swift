import Events
import StrataCore

/// Every command of DOMAIN.md, as one closed type. Its JSON is the `type` and `payload` of
/// a command body (CONTRACT.md "Commands"): `{"type":"ApproveLoan","payload":{…}}`.
public enum Command: Sendable, Hashable {
    case registerUser(RegisterUser)
    case approveAgent(ApproveAgent)
    case rejectAgent(RejectAgent)
    case updateProfile(UpdateProfile)
    case openAccount(OpenAccount)
    case updateAccount(UpdateAccount)
    case changeAccountStatus(ChangeAccountStatus)
    case requestLoan(RequestLoan)
    case approveLoan(ApproveLoan)
    case rejectLoan(RejectLoan)
    case receivePayment(ReceivePayment)
    case setCommissionRate(SetCommissionRate)
    case requestCashout(RequestCashout)
    case approveCashout(ApproveCashout)
    case rejectCashout(RejectCashout)
    case createInvoice(CreateInvoice)
    case recordInvoicePayment(RecordInvoicePayment)
    case cancelInvoice(CancelInvoice)
    case eraseSubject(EraseSubject)

    /// The wrapped payload.
    public var payload: any CommandPayload {
        switch self {
        case .registerUser(let c): c
        case .approveAgent(let c): c
        case .rejectAgent(let c): c
        case .updateProfile(let c): c
        case .openAccount(let c): c
        case .updateAccount(let c): c
        case .changeAccountStatus(let c): c
        case .requestLoan(let c): c
        case .approveLoan(let c): c
        case .rejectLoan(let c): c
        case .receivePayment(let c): c
        case .setCommissionRate(let c): c
        case .requestCashout(let c): c
        case .approveCashout(let c): c
        case .rejectCashout(let c): c
        case .createInvoice(let c): c
        case .recordInvoicePayment(let c): c
        case .cancelInvoice(let c): c
        case .eraseSubject(let c): c
        }
    }

    /// The body's `type`.
    public var type: String { Swift.type(of: payload).commandType }

    /// How one command type is read: validated from a payload (`parse`), or decoded
    /// as a shape (`Decodable`). One table, so the two can never disagree on the types.
    private struct Entry: Sendable {
        let read: @Sendable (inout PayloadReader) -> Command?
        let decode: @Sendable (KeyedDecodingContainer<CodingKeys>) throws -> Command
    }

    private static func entry<Payload: CommandPayload>(
        _: Payload.Type, _ wrap: @escaping @Sendable (Payload) -> Command
    ) -> (String, Entry) {
        (
            Payload.commandType,
            Entry(
                read: { reader in Payload(reading: &reader).map(wrap) },
                decode: { container in wrap(try container.decode(Payload.self, forKey: .payload)) })
        )
    }

    private static let entries: [String: Entry] = Dictionary(
        uniqueKeysWithValues: [
            entry(RegisterUser.self) { .registerUser($0) },
            entry(ApproveAgent.self) { .approveAgent($0) },
            entry(RejectAgent.self) { .rejectAgent($0) },
            entry(UpdateProfile.self) { .updateProfile($0) },
            entry(OpenAccount.self) { .openAccount($0) },
            entry(UpdateAccount.self) { .updateAccount($0) },
            entry(ChangeAccountStatus.self) { .changeAccountStatus($0) },
            entry(RequestLoan.self) { .requestLoan($0) },
            entry(ApproveLoan.self) { .approveLoan($0) },
            entry(RejectLoan.self) { .rejectLoan($0) },
            entry(ReceivePayment.self) { .receivePayment($0) },
            entry(SetCommissionRate.self) { .setCommissionRate($0) },
            entry(RequestCashout.self) { .requestCashout($0) },
            entry(ApproveCashout.self) { .approveCashout($0) },
            entry(RejectCashout.self) { .rejectCashout($0) },
            entry(CreateInvoice.self) { .createInvoice($0) },
            entry(RecordInvoicePayment.self) { .recordInvoicePayment($0) },
            entry(CancelInvoice.self) { .cancelInvoice($0) },
            entry(EraseSubject.self) { .eraseSubject($0) },
        ])

    /// Every command type, sorted.
    public static let types: [String] = entries.keys.sorted()

    public static func isKnownType(_ type: String) -> Bool { entries[type] != nil }

    /// Reads and validates a body's `type` and `payload`: the one way a command enters the
    /// domain. Every problem is reported at once (INVALID with details); an unknown type
    /// is INVALID with reason UNKNOWN_COMMAND_TYPE. Range checks that depend on
    /// configuration or on today's date use `context`. `numbers` are the payload's numbers
    /// that the parser could not hold (`CommandBody.payloadNumbers`), a `null` in the payload
    /// standing for each: a payload with any is never valid.
    public static func parse(
        type: String, payload: [String: JSONValue], numbers: [JSONParser.UnrepresentableNumber] = [],
        context: DecisionContext
    ) -> Result<ValidCommand, StrataError> {
        guard let entry = entries[type] else {
            return .failure(
                StrataError(
                    .invalid, reason: "UNKNOWN_COMMAND_TYPE", "unknown command type \"\(type)\"",
                    details: [StrataError.FieldProblem(field: "type", reason: "UNKNOWN_COMMAND_TYPE")]))
        }
        // Nearly every payload has no such numbers, and its reader no table of them to make.
        var reader =
            numbers.isEmpty
            ? PayloadReader(payload, context: context) : PayloadReader(payload, context: context, numbers: numbers)
        let command = entry.read(&reader)
        reader.finish()
        guard reader.problems.isEmpty, numbers.isEmpty, let command else {
            // `reason` repeats the first problem's, so a client with one problem to look
            // for (BELOW_MINIMUM_CASHOUT) finds it at the top; `details` has them all. The
            // reader reports each number where it reads its field, or the field unknown; were
            // it ever to pass one by, the numbers themselves are the problems.
            let problems = reader.problems.isEmpty ? numbers.map(PayloadReader.problem) : reader.problems
            let summary = problems.map(\.description).joined(separator: "; ")
            return .failure(
                StrataError(.invalid, reason: problems.first?.reason, "\(type) is invalid: \(summary)", details: problems))
        }
        return .success(ValidCommand(command))
    }

    /// Validates a command built in code by the same path a body takes: its payload is
    /// encoded to JSON and parsed. For tests and tools; the service parses bodies directly.
    public func validated(in context: DecisionContext) -> Result<ValidCommand, StrataError> {
        guard case .object(let members) = payloadJSON else {
            return .failure(StrataError(.internal, "\(type) payload did not encode as an object"))
        }
        return Command.parse(type: type, payload: members, context: context)
    }

    /// The payload as JSON.
    public var payloadJSON: JSONValue {
        do {
            return try JSONValueEncoder.encode(payload)
        } catch {
            preconditionFailure("command payloads always encode: \(error)")
        }
    }
}

/// A command that passed `Command.parse`: well-formed, every field within its rules.
/// Only validated commands can be decided.
public struct ValidCommand: Sendable, Hashable {
    public let command: Command

    fileprivate init(_ command: Command) {
        self.command = command
    }
}

extension Command: Codable {
    fileprivate enum CodingKeys: String, CodingKey {
        case type, payload
    }

    /// Writes `{"type":…,"payload":{…}}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(payload, forKey: .payload)
    }

    /// Reads the shape of `{"type":…,"payload":{…}}` without the business validation;
    /// `parse` (or `validated`) is what makes a command decidable.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        guard let entry = Command.entries[type] else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown command type \"\(type)\"")
        }
        self = try entry.decode(container)
    }
}
