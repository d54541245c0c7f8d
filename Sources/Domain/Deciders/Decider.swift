import Events
import StrataCore

/// The domain's one entry point: a validated command, who sent it, and the state it reads,
/// in; the events to append or the refusal, out. Pure: no I/O, no clock, no randomness.
///
/// Refusals follow CONTRACT.md's order, so every request gets the one answer it should:
/// INVALID (the payload alone, already checked by `Command.parse`), FORBIDDEN for what the
/// actor's role or status can never do, NOT_FOUND, FORBIDDEN for ownership (another
/// agent's account), CONFLICT (the body's `expectedVersion`), REJECTED (a domain rule).
public enum Decider {
    /// `reads` are the streams `valid.command.reads(actor:configuration:)` names, which the
    /// caller has loaded into `state`: it needed them first for that, and taking them as
    /// given spares working them out twice a command.
    public static func decide(
        _ valid: ValidCommand, actor: String, expectedVersion: Int64? = nil, reads: [StreamRef], state: DomainState,
        context: DecisionContext
    ) -> Decision {
        let input = DecisionInput(
            actorId: actor, expectedVersion: expectedVersion, state: state, context: context, reads: reads)
        do throws(StrataError) {
            let accepted: Decision.Accepted
            switch valid.command {
            case .registerUser(let c): accepted = try UserDecisions.register(c, input)
            case .approveAgent(let c): accepted = try UserDecisions.approve(c, input)
            case .rejectAgent(let c): accepted = try UserDecisions.reject(c, input)
            case .updateProfile(let c): accepted = try UserDecisions.updateProfile(c, input)
            case .openAccount(let c): accepted = try AccountDecisions.open(c, input)
            case .updateAccount(let c): accepted = try AccountDecisions.update(c, input)
            case .changeAccountStatus(let c): accepted = try AccountDecisions.changeStatus(c, input)
            case .requestLoan(let c): accepted = try LoanDecisions.request(c, input)
            case .approveLoan(let c): accepted = try LoanDecisions.approve(c, input)
            case .rejectLoan(let c): accepted = try LoanDecisions.reject(c, input)
            case .receivePayment(let c): accepted = try LoanDecisions.receivePayment(c, input)
            case .setCommissionRate(let c): accepted = try EarningsDecisions.setCommissionRate(c, input)
            case .requestCashout(let c): accepted = try EarningsDecisions.requestCashout(c, input)
            case .approveCashout(let c): accepted = try EarningsDecisions.approveCashout(c, input)
            case .rejectCashout(let c): accepted = try EarningsDecisions.rejectCashout(c, input)
            case .createInvoice(let c): accepted = try InvoiceDecisions.create(c, input)
            case .recordInvoicePayment(let c): accepted = try InvoiceDecisions.recordPayment(c, input)
            case .cancelInvoice(let c): accepted = try InvoiceDecisions.cancel(c, input)
            case .eraseSubject(let c): accepted = try PersonalDataDecisions.erase(c, input)
            }
            return .accepted(accepted)
        } catch {
            return .refused(error)
        }
    }
}

/// What every decision works from, with the checks they share.
struct DecisionInput {
    let actorId: String
    let expectedVersion: Int64?
    let state: DomainState
    let context: DecisionContext
    /// The streams the command declared it reads (`Command.reads`).
    let reads: [StreamRef]

    var today: LocalDate { context.today }

    /// The acting user, if they may act as one of `roles`: FORBIDDEN when they are not a
    /// user, act through a key narrowed to other roles, hold another role, or (when
    /// `approved`) are not APPROVED.
    func actor(_ roles: Set<Role>, approved: Bool = true, doing action: String) throws(StrataError) -> UserState {
        guard let user = state.users[actorId] else {
            throw .forbidden("UNKNOWN_ACTOR", "actor \(actorId) is not a user")
        }
        try permitByKey(user.role)
        guard roles.contains(user.role) else {
            let allowed = roles.map(\.rawValue).sorted().joined(separator: " or ")
            throw .forbidden("ROLE_NOT_ALLOWED", "only \(allowed) users may \(action); \(actorId) is \(user.role.rawValue)")
        }
        if approved && user.status != .approved {
            throw .forbidden("ACTOR_NOT_APPROVED", "\(actorId) is \(user.status.rawValue), not APPROVED, and may not \(action)")
        }
        return user
    }

    /// The approved admin acting.
    func admin(doing action: String) throws(StrataError) -> UserState {
        try actor([.admin], doing: action)
    }

    /// FORBIDDEN when the sending key is narrowed to roles that exclude `role`.
    func permitByKey(_ role: Role) throws(StrataError) {
        if let permitted = context.permittedRoles, !permitted.contains(role) {
            throw .forbidden(
                "KEY_ROLE_NOT_PERMITTED", "the sending key may not act for \(role.rawValue) users")
        }
    }

    /// CONFLICT when the body's `expectedVersion` does not match `stream`'s version.
    func checkExpectedVersion(_ stream: StreamRef) throws(StrataError) {
        guard let expected = expectedVersion else { return }
        let actual = state.version(of: stream)
        if expected != actual {
            throw StrataError(
                .conflict, reason: "WRONG_EXPECTED_VERSION",
                "\(stream) is at version \(actual), not the expected \(expected)")
        }
    }

    /// The decision to append `events`. It holds only while every stream it read is still
    /// at the version it read, so each of them is expected at that version: a decision
    /// never stands on state that changed underneath it.
    func accept(_ events: [StrataEvent]) -> Decision.Accepted {
        var expected: [StreamRef: Int64] = [:]
        expected.reserveCapacity(reads.count)  // grown from empty, it was rehashed as it filled
        for stream in reads { expected[stream] = state.version(of: stream) }
        return Decision.Accepted(events: events, expectedVersions: expected)
    }
}

extension StrataError {
    static func forbidden(_ reason: String, _ message: String) -> StrataError {
        StrataError(.forbidden, reason: reason, message)
    }

    static func notFound(_ reason: String, _ message: String) -> StrataError {
        StrataError(.notFound, reason: reason, message)
    }

    static func rejected(_ reason: String, _ message: String) -> StrataError {
        StrataError(.rejected, reason: reason, message)
    }
}
