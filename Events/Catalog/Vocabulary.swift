// The closed vocabularies events use. Raw values are the wire spelling of DOMAIN.md;
// an unknown spelling fails to decode rather than being guessed at.

/// What a user may do: administer everything, or work in the field.
public enum Role: String, Codable, Sendable, Hashable, CaseIterable {
    case admin = "ADMIN"
    case agent = "AGENT"
}

/// Where a user's registration stands. Agents start PENDING; admins are APPROVED at once.
public enum UserStatus: String, Codable, Sendable, Hashable, CaseIterable {
    case pending = "PENDING"
    case approved = "APPROVED"
    case rejected = "REJECTED"
}

/// Whether a borrower account may take new loans.
public enum AccountStatus: String, Codable, Sendable, Hashable, CaseIterable {
    case active = "ACTIVE"
    case inactive = "INACTIVE"
    case suspended = "SUSPENDED"
}

/// How often a loan's installments fall due.
public enum LoanFrequency: String, Codable, Sendable, Hashable, CaseIterable {
    case weekly = "WEEKLY"
    case biMonthly = "BI_MONTHLY"
    case monthly = "MONTHLY"

    /// Days between two installments: 7, 15 or 30.
    public var periodDays: Int {
        switch self {
        case .weekly: 7
        case .biMonthly: 15
        case .monthly: 30
        }
    }
}

/// How a loan's interest is computed: on the reducing balance (EMI) or flat on the principal.
public enum InterestMethod: String, Codable, Sendable, Hashable, CaseIterable {
    case reducing = "REDUCING"
    case flat = "FLAT"
}

/// How money was handed over.
public enum PaymentMethod: String, Codable, Sendable, Hashable, CaseIterable {
    case cash = "CASH"
    case wallet = "WALLET"
    case bank = "BANK"
}

/// What a loan payment turned out to be, judged after allocation.
public enum PaymentType: String, Codable, Sendable, Hashable, CaseIterable {
    /// Settled at least the oldest installment that was unpaid, without closing the loan.
    case regular = "REGULAR"
    /// Left the oldest unpaid installment still not fully paid.
    case partial = "PARTIAL"
    /// Went to accrued penalty only.
    case penalty = "PENALTY"
    /// Left nothing owed.
    case full = "FULL"
}

/// Where an invoice stands.
public enum InvoiceStatus: String, Codable, Sendable, Hashable, CaseIterable {
    case issued = "ISSUED"
    case partiallyPaid = "PARTIALLY_PAID"
    case paid = "PAID"
    case cancelled = "CANCELLED"
}

/// The kinds of data subject whose personal data can be sealed and erased.
public enum SubjectKind: String, Codable, Sendable, Hashable, CaseIterable {
    /// A borrower account.
    case account = "ACCOUNT"
    /// An invoice customer.
    case party = "PARTY"
    /// A user (admin or agent).
    case user = "USER"
}
