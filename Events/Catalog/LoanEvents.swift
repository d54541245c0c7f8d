import StrataCore

// Stream `loan-<loanId>`: a loan from request to closing.

/// A loan was asked for on a borrower account; it waits for an admin (PENDING_APPROVAL).
public struct LoanRequested: DomainEvent, Hashable {
    public static let eventType = "LoanRequested"
    public static let schemaVersion = 1

    public var loanId: String
    public var accountId: String
    /// The account's assigned agent when the loan was requested: the agent who earns its
    /// commissions, whoever records the payments and wherever the account moves later.
    public var agentId: String
    public var principalCents: Int64
    /// Interest per month in basis points (300–500).
    public var monthlyRateBp: Int
    public var tenureMonths: Int
    public var frequency: LoanFrequency
    /// Decided: REDUCING when the command left it out.
    public var interestMethod: InterestMethod
    /// Decided: today (UTC) when the command left it out; may be back-dated.
    public var requestedOn: LocalDate
    public var requestedBy: String

    public init(
        loanId: String, accountId: String, agentId: String, principalCents: Int64, monthlyRateBp: Int,
        tenureMonths: Int, frequency: LoanFrequency, interestMethod: InterestMethod, requestedOn: LocalDate,
        requestedBy: String
    ) {
        self.loanId = loanId
        self.accountId = accountId
        self.agentId = agentId
        self.principalCents = principalCents
        self.monthlyRateBp = monthlyRateBp
        self.tenureMonths = tenureMonths
        self.frequency = frequency
        self.interestMethod = interestMethod
        self.requestedOn = requestedOn
        self.requestedBy = requestedBy
    }
}

/// One installment of an amortization schedule, as computed at approval.
public struct ScheduleEntry: Codable, Sendable, Hashable {
    /// 1-based position in the schedule.
    public var number: Int
    public var dueDate: LocalDate
    public var principalCents: Int64
    public var interestCents: Int64
    /// principalCents + interestCents.
    public var totalCents: Int64
    /// Principal still owed once this installment is paid.
    public var remainingBalanceCents: Int64

    public init(
        number: Int, dueDate: LocalDate, principalCents: Int64, interestCents: Int64, totalCents: Int64,
        remainingBalanceCents: Int64
    ) {
        self.number = number
        self.dueDate = dueDate
        self.principalCents = principalCents
        self.interestCents = interestCents
        self.totalCents = totalCents
        self.remainingBalanceCents = remainingBalanceCents
    }
}

/// An admin approved a pending loan: the money is released and the loan is ACTIVE, with
/// the amortization schedule fixed here (replay never recomputes it).
public struct LoanApproved: DomainEvent, Hashable {
    public static let eventType = "LoanApproved"
    public static let schemaVersion = 1

    public var loanId: String
    public var approvedBy: String
    /// Decided: today (UTC) when the command left it out; installment i is due
    /// approvedOn + i × period days.
    public var approvedOn: LocalDate
    /// Every installment, in order.
    public var schedule: [ScheduleEntry]

    public init(loanId: String, approvedBy: String, approvedOn: LocalDate, schedule: [ScheduleEntry]) {
        self.loanId = loanId
        self.approvedBy = approvedBy
        self.approvedOn = approvedOn
        self.schedule = schedule
    }
}

/// An admin turned a pending loan request down.
public struct LoanRejected: DomainEvent, Hashable {
    public static let eventType = "LoanRejected"
    public static let schemaVersion = 1

    public var loanId: String
    public var rejectedBy: String
    public var reason: String

    public init(loanId: String, rejectedBy: String, reason: String) {
        self.loanId = loanId
        self.rejectedBy = rejectedBy
        self.reason = reason
    }
}

/// Where a payment's money went, in total.
public struct PaymentAllocation: Codable, Sendable, Hashable {
    public var penaltyCents: Int64
    public var interestCents: Int64
    public var principalCents: Int64

    public init(penaltyCents: Int64, interestCents: Int64, principalCents: Int64) {
        self.penaltyCents = penaltyCents
        self.interestCents = interestCents
        self.principalCents = principalCents
    }
}

/// What a payment did to one installment: the penalty it accrued there, and where its
/// money went there.
public struct InstallmentAllocation: Codable, Sendable, Hashable {
    /// The installment's `ScheduleEntry.number`.
    public var number: Int
    /// Penalty accrued on this installment when the payment was received (a decision:
    /// replay adds it to the installment's penalty instead of recomputing it).
    public var penaltyAccruedCents: Int64
    /// Paid toward the installment's accrued penalty.
    public var penaltyCents: Int64
    public var interestCents: Int64
    public var principalCents: Int64

    public init(
        number: Int, penaltyAccruedCents: Int64, penaltyCents: Int64, interestCents: Int64, principalCents: Int64
    ) {
        self.number = number
        self.penaltyAccruedCents = penaltyAccruedCents
        self.penaltyCents = penaltyCents
        self.interestCents = interestCents
        self.principalCents = principalCents
    }
}

/// Money was received on an active loan and allocated to its installments (oldest first;
/// penalty, then interest, then principal). Schema version 2 added `method` (version 1
/// events read as CASH) and each installment's accrued penalty (read as what was paid).
public struct PaymentReceived: DomainEvent, Hashable {
    public static let eventType = "PaymentReceived"
    public static let schemaVersion = 2

    public var paymentId: String
    public var loanId: String
    public var amountCents: Int64
    public var paidOn: LocalDate
    /// Since schema version 2; decided CASH when the command left it out.
    public var method: PaymentMethod
    /// A wallet transaction hash or bank reference, unique per loan.
    public var externalRef: String?
    public var notes: String?
    public var receivedBy: String
    public var type: PaymentType
    /// allocation's parts sum to amountCents.
    public var allocation: PaymentAllocation
    /// The installments this payment touched (accrued penalty on, or paid money to), in order.
    public var perInstallment: [InstallmentAllocation]
    /// Unpaid principal + unpaid interest + accrued unpaid penalty, after this payment.
    public var outstandingAfterCents: Int64

    public init(
        paymentId: String, loanId: String, amountCents: Int64, paidOn: LocalDate, method: PaymentMethod,
        externalRef: String? = nil, notes: String? = nil, receivedBy: String, type: PaymentType,
        allocation: PaymentAllocation, perInstallment: [InstallmentAllocation], outstandingAfterCents: Int64
    ) {
        self.paymentId = paymentId
        self.loanId = loanId
        self.amountCents = amountCents
        self.paidOn = paidOn
        self.method = method
        self.externalRef = externalRef
        self.notes = notes
        self.receivedBy = receivedBy
        self.type = type
        self.allocation = allocation
        self.perInstallment = perInstallment
        self.outstandingAfterCents = outstandingAfterCents
    }
}

/// Nothing is left to pay on the loan: the payment named here settled it.
public struct LoanClosed: DomainEvent, Hashable {
    public static let eventType = "LoanClosed"
    public static let schemaVersion = 1

    public var loanId: String
    /// The settling payment's paidOn.
    public var closedOn: LocalDate
    public var paymentId: String

    public init(loanId: String, closedOn: LocalDate, paymentId: String) {
        self.loanId = loanId
        self.closedOn = closedOn
        self.paymentId = paymentId
    }
}
