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

    private typealias Reader = @Sendable (inout PayloadReader) -> Command?

    private static func reader<Payload: CommandPayload>(
        _: Payload.Type, _ wrap: @escaping @Sendable (Payload) -> Command
    ) -> (String, Reader) {
        (Payload.commandType, { reader in Payload(reading: &reader).map(wrap) })
    }

    private static let readers: [String: Reader] = Dictionary(
        uniqueKeysWithValues: [
            reader(RegisterUser.self) { .registerUser($0) },
            reader(ApproveAgent.self) { .approveAgent($0) },
            reader(RejectAgent.self) { .rejectAgent($0) },
            reader(UpdateProfile.self) { .updateProfile($0) },
            reader(OpenAccount.self) { .openAccount($0) },
            reader(UpdateAccount.self) { .updateAccount($0) },
            reader(ChangeAccountStatus.self) { .changeAccountStatus($0) },
            reader(RequestLoan.self) { .requestLoan($0) },
            reader(ApproveLoan.self) { .approveLoan($0) },
            reader(RejectLoan.self) { .rejectLoan($0) },
            reader(ReceivePayment.self) { .receivePayment($0) },
            reader(SetCommissionRate.self) { .setCommissionRate($0) },
            reader(RequestCashout.self) { .requestCashout($0) },
            reader(ApproveCashout.self) { .approveCashout($0) },
            reader(RejectCashout.self) { .rejectCashout($0) },
            reader(CreateInvoice.self) { .createInvoice($0) },
            reader(RecordInvoicePayment.self) { .recordInvoicePayment($0) },
            reader(CancelInvoice.self) { .cancelInvoice($0) },
            reader(EraseSubject.self) { .eraseSubject($0) },
        ])

    /// Every command type, sorted.
    public static let types: [String] = readers.keys.sorted()

    /// Reads and validates a body's `type` and `payload`: the one way a command enters the
    /// domain. Every problem is reported at once (INVALID with details); an unknown type
    /// is INVALID with reason UNKNOWN_COMMAND_TYPE. Range checks that depend on
    /// configuration or on today's date use `context`.
    public static func parse(
        type: String, payload: [String: JSONValue], context: DecisionContext
    ) -> Result<ValidCommand, StrataError> {
        guard let read = readers[type] else {
            return .failure(
                StrataError(
                    .invalid, reason: "UNKNOWN_COMMAND_TYPE", "unknown command type \"\(type)\"",
                    details: [StrataError.FieldProblem(field: "type", reason: "UNKNOWN_COMMAND_TYPE")]))
        }
        var reader = PayloadReader(payload, context: context)
        let command = read(&reader)
        reader.finish()
        guard reader.problems.isEmpty, let command else {
            // `reason` repeats the first problem's, so a client with one problem to look
            // for (BELOW_MINIMUM_CASHOUT) finds it at the top; `details` has them all.
            let problems = reader.problems
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
            return try JSONParser.parse(CanonicalJSON.encode(payload))
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
    private enum CodingKeys: String, CodingKey {
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
        func payload<Payload: CommandPayload>(_: Payload.Type) throws -> Payload {
            try container.decode(Payload.self, forKey: .payload)
        }
        switch type {
        case RegisterUser.commandType: self = .registerUser(try payload(RegisterUser.self))
        case ApproveAgent.commandType: self = .approveAgent(try payload(ApproveAgent.self))
        case RejectAgent.commandType: self = .rejectAgent(try payload(RejectAgent.self))
        case UpdateProfile.commandType: self = .updateProfile(try payload(UpdateProfile.self))
        case OpenAccount.commandType: self = .openAccount(try payload(OpenAccount.self))
        case UpdateAccount.commandType: self = .updateAccount(try payload(UpdateAccount.self))
        case ChangeAccountStatus.commandType: self = .changeAccountStatus(try payload(ChangeAccountStatus.self))
        case RequestLoan.commandType: self = .requestLoan(try payload(RequestLoan.self))
        case ApproveLoan.commandType: self = .approveLoan(try payload(ApproveLoan.self))
        case RejectLoan.commandType: self = .rejectLoan(try payload(RejectLoan.self))
        case ReceivePayment.commandType: self = .receivePayment(try payload(ReceivePayment.self))
        case SetCommissionRate.commandType: self = .setCommissionRate(try payload(SetCommissionRate.self))
        case RequestCashout.commandType: self = .requestCashout(try payload(RequestCashout.self))
        case ApproveCashout.commandType: self = .approveCashout(try payload(ApproveCashout.self))
        case RejectCashout.commandType: self = .rejectCashout(try payload(RejectCashout.self))
        case CreateInvoice.commandType: self = .createInvoice(try payload(CreateInvoice.self))
        case RecordInvoicePayment.commandType: self = .recordInvoicePayment(try payload(RecordInvoicePayment.self))
        case CancelInvoice.commandType: self = .cancelInvoice(try payload(CancelInvoice.self))
        case EraseSubject.commandType: self = .eraseSubject(try payload(EraseSubject.self))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown command type \"\(type)\"")
        }
    }
}
