import Events
import StrataCore

/// The account's agent or an admin asks for a loan.
public struct RequestLoan: CommandPayload {
    public static let commandType = "RequestLoan"
    public static let monthlyRateRangeBp = 300...500
    public static let tenureRangeMonths = 2...12

    public var loanId: String
    public var accountId: String
    public var principalCents: Int64
    public var monthlyRateBp: Int
    public var tenureMonths: Int
    public var frequency: LoanFrequency
    public var interestMethod: InterestMethod?
    public var requestedOn: LocalDate?

    public init(
        loanId: String, accountId: String, principalCents: Int64, monthlyRateBp: Int, tenureMonths: Int,
        frequency: LoanFrequency, interestMethod: InterestMethod? = nil, requestedOn: LocalDate? = nil
    ) {
        self.loanId = loanId
        self.accountId = accountId
        self.principalCents = principalCents
        self.monthlyRateBp = monthlyRateBp
        self.tenureMonths = tenureMonths
        self.frequency = frequency
        self.interestMethod = interestMethod
        self.requestedOn = requestedOn
    }

    public init?(reading r: inout PayloadReader) {
        let context = r.context
        let loanId = r.identifier("loanId")
        let accountId = r.identifier("accountId")
        let principal = r.integer(
            "principalCents", in: 1...context.configuration.maximumPrincipalCents,
            low: PayloadReader.Reason.mustBePositive, high: PayloadReader.Reason.aboveMaximum)
        let rate = r.int("monthlyRateBp", in: RequestLoan.monthlyRateRangeBp)
        let tenure = r.int("tenureMonths", in: RequestLoan.tenureRangeMonths)
        let frequency = r.choice("frequency", LoanFrequency.self)
        let method = r.choice("interestMethod", InterestMethod.self, required: false)
        let requestedOn = r.pastDate("requestedOn", required: false)
        if let requestedOn, requestedOn < context.today.adding(days: -context.configuration.maximumBackdatingDays) {
            r.report("requestedOn", PayloadReader.Reason.tooFarInPast)
        }
        guard let loanId, let accountId, let principal, let rate, let tenure, let frequency else { return nil }
        self.init(
            loanId: loanId, accountId: accountId, principalCents: principal, monthlyRateBp: rate, tenureMonths: tenure,
            frequency: frequency, interestMethod: method, requestedOn: requestedOn)
    }
}

/// An admin approves a pending loan; the schedule is fixed then.
public struct ApproveLoan: CommandPayload {
    public static let commandType = "ApproveLoan"
    public var loanId: String
    public var approvedOn: LocalDate?

    public init(loanId: String, approvedOn: LocalDate? = nil) {
        self.loanId = loanId
        self.approvedOn = approvedOn
    }

    public init?(reading r: inout PayloadReader) {
        let loanId = r.identifier("loanId")
        let approvedOn = r.pastDate("approvedOn", required: false)
        guard let loanId else { return nil }
        self.init(loanId: loanId, approvedOn: approvedOn)
    }
}

/// An admin turns a pending loan down.
public struct RejectLoan: CommandPayload {
    public static let commandType = "RejectLoan"
    public var loanId: String
    public var reason: String

    public init(loanId: String, reason: String) {
        self.loanId = loanId
        self.reason = reason
    }

    public init?(reading r: inout PayloadReader) {
        let loanId = r.identifier("loanId")
        let reason = r.text("reason", maximumLength: PayloadLimits.reasonLength, multiline: true)
        guard let loanId, let reason else { return nil }
        self.init(loanId: loanId, reason: reason)
    }
}

/// The loan's agent or an admin records money received on an active loan.
public struct ReceivePayment: CommandPayload {
    public static let commandType = "ReceivePayment"
    public var paymentId: String
    public var loanId: String
    public var amountCents: Int64
    public var paidOn: LocalDate
    public var method: PaymentMethod?
    public var externalRef: String?
    public var notes: String?

    public init(
        paymentId: String, loanId: String, amountCents: Int64, paidOn: LocalDate, method: PaymentMethod? = nil,
        externalRef: String? = nil, notes: String? = nil
    ) {
        self.paymentId = paymentId
        self.loanId = loanId
        self.amountCents = amountCents
        self.paidOn = paidOn
        self.method = method
        self.externalRef = externalRef
        self.notes = notes
    }

    public init?(reading r: inout PayloadReader) {
        let paymentId = r.identifier("paymentId")
        let loanId = r.identifier("loanId")
        let amount = r.integer(
            "amountCents", in: 1...PayloadLimits.maximumAmountCents, low: PayloadReader.Reason.mustBePositive)
        let paidOn = r.pastDate("paidOn")
        let method = r.choice("method", PaymentMethod.self, required: false)
        let reference = r.text("externalRef", maximumLength: PayloadLimits.referenceLength, required: false)
        let notes = r.text("notes", maximumLength: PayloadLimits.notesLength, multiline: true, required: false)
        guard let paymentId, let loanId, let amount, let paidOn else { return nil }
        self.init(
            paymentId: paymentId, loanId: loanId, amountCents: amount, paidOn: paidOn, method: method,
            externalRef: reference, notes: notes)
    }
}
