/// What each projector process writes.
public enum ReadModels {
    /// The read models of `readmodels.db`, in the order their schemas are created:
    /// tables first, then the views that read across them.
    public static let all: [any Projection] = [
        Users(),
        Accounts(),
        // Before LoanPortfolio, which reads its installments.
        LoanInstallments(),
        LoanPortfolio(),
        LoanPayments(),
        AgentEarnings(),
        Notifications(),
        Invoices(),
        Receivables(),
        CollectionsDaily(),
        PendingApprovals(),
        Dashboard(),
    ]

    /// The projection of `audit.db`: one row per event.
    public static let audit: [any Projection] = [AuditLog()]
}
