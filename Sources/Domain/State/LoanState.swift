import Events
import StrataCore

/// One installment of an approved loan and what has happened to it since.
///
/// Laid out in 64 bytes, not the 96 its schedule entry and dates took as they are: a loan's state
/// holds one for each installment (52 for a weekly loan of a year), and the writer's cache is
/// bounded by the bytes of what it holds (`StreamFootprint`), so a smaller installment is more
/// loans held and fewer read again from the store. The number and the dates are kept as 32-bit
/// integers (a `LocalDate` lies within years 1–9999, some 3.7 million days either side of 1970);
/// the schedule's total and remaining balance, which nothing decides by, stay in the event.
public struct InstallmentState: Sendable, Hashable {
    private let storedNumber: Int32
    private let dueDay: Int32
    /// `noDay` until penalty was first accrued.
    private var lastAccrualDay: Int32 = Self.noDay
    public let principalCents: Int64
    public let interestCents: Int64
    public var principalPaidCents: Int64 = 0
    public var interestPaidCents: Int64 = 0
    public var penaltyAccruedCents: Int64 = 0
    public var penaltyPaidCents: Int64 = 0

    private static let noDay = Int32.min

    public init(entry: ScheduleEntry) {
        storedNumber = Int32(truncatingIfNeeded: entry.number)
        dueDay = Int32(truncatingIfNeeded: entry.dueDate.daysSinceEpoch)
        principalCents = entry.principalCents
        interestCents = entry.interestCents
    }

    public var number: Int { Int(storedNumber) }
    public var dueDate: LocalDate { LocalDate(daysSinceEpoch: Int(dueDay)) }
    /// The last date penalty was accrued through (the last payment's paidOn).
    public var lastAccrualDate: LocalDate? {
        get { lastAccrualDay == Self.noDay ? nil : LocalDate(daysSinceEpoch: Int(lastAccrualDay)) }
        set { lastAccrualDay = newValue.map { Int32(truncatingIfNeeded: $0.daysSinceEpoch) } ?? Self.noDay }
    }
    public var unpaidPrincipalCents: Int64 { principalCents - principalPaidCents }
    public var unpaidInterestCents: Int64 { interestCents - interestPaidCents }
    public var unpaidPenaltyCents: Int64 { penaltyAccruedCents - penaltyPaidCents }
    /// What penalty accrues on: unpaid principal plus unpaid interest.
    public var unpaidScheduledCents: Int64 { unpaidPrincipalCents + unpaidInterestCents }
    public var owedCents: Int64 { unpaidScheduledCents + unpaidPenaltyCents }
    public var isSettled: Bool { owedCents == 0 }
}

/// A loan (`loan-<id>`) from request to closing.
public struct LoanState: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        case pendingApproval = "PENDING_APPROVAL"
        case active = "ACTIVE"
        case rejected = "REJECTED"
        case closed = "CLOSED"
    }

    public var request: LoanRequested
    public var status: Status
    public var approvedOn: LocalDate?
    public var installments: [InstallmentState] = []
    /// The latest payment's paidOn: payments may not be dated before it.
    public var lastPaidOn: LocalDate?
    public var paymentIds: Set<String> = []
    /// External references (wallet hashes, bank references) already used on this loan.
    public var externalRefs: Set<String> = []

    public init(request: LoanRequested) {
        self.request = request
        self.status = .pendingApproval
    }

    public var loanId: String { request.loanId }
    /// The agent who earns this loan's commissions and may take its payments.
    public var agentId: String { request.agentId }

    /// Unpaid principal + unpaid interest of all installments + accrued unpaid penalty.
    public var outstandingCents: Int64 { installments.reduce(0) { $0 + $1.owedCents } }

    public static func evolve(_ state: LoanState?, _ event: StrataEvent) -> LoanState? {
        switch event {
        case .loanRequested(let e):
            return LoanState(request: e)
        case .loanApproved(let e):
            guard var loan = state else { return nil }
            loan.status = .active
            loan.approvedOn = e.approvedOn
            loan.installments = e.schedule.map(InstallmentState.init(entry:))
            return loan
        case .loanRejected:
            guard var loan = state else { return nil }
            loan.status = .rejected
            return loan
        case .paymentReceived(let e):
            guard var loan = state else { return nil }
            loan.record(e)
            return loan
        case .loanClosed:
            guard var loan = state else { return nil }
            loan.status = .closed
            return loan
        default:
            return state
        }
    }

    /// Applies what a payment decided: the penalty it accrued and where its money went.
    /// Penalty is accounted through the payment's date on every installment.
    private mutating func record(_ payment: PaymentReceived) {
        for part in payment.perInstallment {
            guard let index = installments.firstIndex(where: { $0.number == part.number }) else { continue }
            installments[index].penaltyAccruedCents += part.penaltyAccruedCents
            installments[index].penaltyPaidCents += part.penaltyCents
            installments[index].interestPaidCents += part.interestCents
            installments[index].principalPaidCents += part.principalCents
        }
        for index in installments.indices {
            installments[index].lastAccrualDate = payment.paidOn
        }
        lastPaidOn = payment.paidOn
        paymentIds.insert(payment.paymentId)
        if let reference = payment.externalRef { externalRefs.insert(reference) }
    }
}
