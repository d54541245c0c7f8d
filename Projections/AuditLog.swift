import Events
import StrataCore

/// The audit log (`audit.db`): one row per event of the store, in position order, saying
/// who did what to which entity, in words, with the event's hash so that any row can be
/// checked against `events.db`.
///
/// Summaries name people and subjects by id only, never by their personal data (names,
/// phones, emails, addresses, tax ids), so the log can be read and kept without holding
/// any. Every event type has an action and a summary in an exhaustive `switch`: a new event
/// type does not compile until it says how it is audited.
public struct AuditLog: Projection {
    public init() {}

    public var name: String { "audit" }
    public var categories: [String]? { nil }

    public var schema: ProjectionSchema {
        ProjectionSchema(
            version: 1,
            statements: [
                """
                CREATE TABLE audit_log (
                    position       INTEGER PRIMARY KEY,
                    recorded_at    TEXT    NOT NULL,
                    actor          TEXT    NOT NULL,
                    action         TEXT    NOT NULL,
                    entity         TEXT    NOT NULL,
                    entity_type    TEXT    NOT NULL,
                    event_type     TEXT    NOT NULL,
                    summary        TEXT    NOT NULL,
                    command_id     TEXT    NOT NULL,
                    correlation_id TEXT,
                    hash           TEXT    NOT NULL
                )
                """,
                "CREATE INDEX audit_log_by_actor ON audit_log (actor, position)",
                "CREATE INDEX audit_log_by_entity ON audit_log (entity, position)",
                "CREATE INDEX audit_log_by_action ON audit_log (action, position)",
            ])
    }

    public func apply(_ event: ProjectedEvent, to tables: any ProjectionTables) throws {
        let category = event.stream.firstIndex(of: "-").map { String(event.stream[..<$0]) } ?? event.stream
        try tables.run(
            Self.insert,
            [
                .integer(event.position), .text(event.recordedAt.description), .text(event.metadata.actor),
                .text(AuditLog.action(of: event.event)), .text(event.stream), .text(category),
                .text(event.event.eventType), .text(AuditLog.summary(of: event.event)),
                .text(event.metadata.commandId), .text(event.metadata.correlationId), .text(event.hash),
            ])
    }

    private static let insert = ProjectionStatement(
        """
        INSERT INTO audit_log (position, recorded_at, actor, action, entity, entity_type, event_type, summary,
            command_id, correlation_id, hash)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """)

    /// Every action `action(of:)` gives, in the catalog's order: the codes `strata query audit
    /// --action` takes.
    public static let actions = [
        "REGISTER_USER", "APPROVE_AGENT", "REJECT_AGENT", "UPDATE_PROFILE", "CREATE_ACCOUNT", "UPDATE_ACCOUNT",
        "CHANGE_ACCOUNT_STATUS", "CREATE_LOAN", "APPROVE_LOAN", "REJECT_LOAN", "RECEIVE_PAYMENT", "CLOSE_LOAN",
        "EARN_COMMISSION", "RESERVE_EARNINGS", "RELEASE_EARNINGS", "CASHOUT_REQUEST", "CASHOUT_APPROVED",
        "CASHOUT_REJECTED", "UPDATE_COMMISSION", "CREATE_INVOICE", "RECORD_INVOICE_PAYMENT", "INVOICE_PAID",
        "CANCEL_INVOICE", "ALLOCATE_INVOICE_NUMBER", "ERASE_PERSONAL_DATA",
    ]

    /// The audit action of an event: the lending app's transaction types, and a name in
    /// the same style for every other event type.
    public static func action(of event: StrataEvent) -> String {
        switch event {
        case .userRegistered: "REGISTER_USER"
        case .agentApproved: "APPROVE_AGENT"
        case .agentRejected: "REJECT_AGENT"
        case .profileUpdated: "UPDATE_PROFILE"
        case .accountOpened: "CREATE_ACCOUNT"
        case .accountUpdated: "UPDATE_ACCOUNT"
        case .accountStatusChanged: "CHANGE_ACCOUNT_STATUS"
        case .loanRequested: "CREATE_LOAN"
        case .loanApproved: "APPROVE_LOAN"
        case .loanRejected: "REJECT_LOAN"
        case .paymentReceived: "RECEIVE_PAYMENT"
        case .loanClosed: "CLOSE_LOAN"
        case .commissionEarned: "EARN_COMMISSION"
        case .earningsReserved: "RESERVE_EARNINGS"
        case .earningsReleased: "RELEASE_EARNINGS"
        case .cashoutRequested: "CASHOUT_REQUEST"
        case .cashoutApproved: "CASHOUT_APPROVED"
        case .cashoutRejected: "CASHOUT_REJECTED"
        case .commissionRateChanged: "UPDATE_COMMISSION"
        case .invoiceCreated: "CREATE_INVOICE"
        case .invoicePaymentRecorded: "RECORD_INVOICE_PAYMENT"
        case .invoicePaid: "INVOICE_PAID"
        case .invoiceCancelled: "CANCEL_INVOICE"
        case .invoiceNumberAllocated: "ALLOCATE_INVOICE_NUMBER"
        case .personalDataErased: "ERASE_PERSONAL_DATA"
        }
    }

    /// One sentence saying what the event decided, naming people and subjects by id only.
    /// Personal fields that changed are named by field, never by value.
    public static func summary(of event: StrataEvent) -> String {
        switch event {
        case .userRegistered(let e):
            return "user \(e.userId) registered as \(e.role.rawValue) (\(e.status.rawValue))"
        case .agentApproved(let e):
            return "\(e.approvedBy) approved agent \(e.agentId)"
        case .agentRejected(let e):
            return "\(e.rejectedBy) rejected agent \(e.agentId): \(e.reason)"
        case .profileUpdated(let e):
            let fields = changed([
                ("fullName", e.fullName != nil), ("phone", e.phone != nil), ("address", e.address != nil),
                ("dateOfBirth", e.dateOfBirth != nil),
            ])
            return "\(e.updatedBy) updated the profile of user \(e.userId): \(fields)"
        case .accountOpened(let e):
            return "\(e.openedBy) opened account \(e.accountId) for agent \(e.assignedAgentId) (\(e.status.rawValue))"
        case .accountUpdated(let e):
            var text = "\(e.updatedBy) updated account \(e.accountId): "
            text += changed([
                ("name", e.name != nil), ("phone", e.phone != nil), ("email", e.email != nil),
                ("alternatePhone", e.alternatePhone != nil), ("address", e.address != nil),
                ("assignedAgentId", e.assignedAgentId != nil),
            ])
            if let agent = e.assignedAgentId { text += "; now assigned to agent \(agent)" }
            return text
        case .accountStatusChanged(let e):
            return "\(e.changedBy) set account \(e.accountId) to \(e.status.rawValue): \(e.reason)"
        case .loanRequested(let e):
            let agent = e.agentId == e.requestedBy ? "" : " for agent \(e.agentId)"
            return "\(e.requestedBy) requested loan \(e.loanId) of \(MoneyText.of(e.principalCents)) on account "
                + "\(e.accountId)\(agent) (\(e.tenureMonths) months, \(e.frequency.rawValue), "
                + "\(e.monthlyRateBp) bp/month, \(e.interestMethod.rawValue))"
        case .loanApproved(let e):
            var text = "\(e.approvedBy) approved loan \(e.loanId) on \(e.approvedOn): "
            text += count(e.schedule.count, "installment")
            if let first = e.schedule.first, let last = e.schedule.last {
                text += " of \(MoneyText.of(first.totalCents))"
                if last.totalCents != first.totalCents { text += " (last \(MoneyText.of(last.totalCents)))" }
                text += " due \(first.dueDate) to \(last.dueDate)"
                // Checked: only a store Strata did not write has totals that overflow, and the
                // entry is still due.
                let total = e.schedule.reduce((0 as Int64, false)) { sum, entry in
                    let (next, overflow) = sum.0.addingReportingOverflow(entry.totalCents)
                    return (next, sum.1 || overflow)
                }
                text += total.1 ? ", total beyond 64 bits of cents" : ", total \(MoneyText.of(total.0))"
            }
            return text
        case .loanRejected(let e):
            return "\(e.rejectedBy) rejected loan \(e.loanId): \(e.reason)"
        case .paymentReceived(let e):
            let a = e.allocation
            return "\(e.receivedBy) received payment \(e.paymentId) of \(MoneyText.of(e.amountCents)) on loan "
                + "\(e.loanId), paid on \(e.paidOn) by \(e.method.rawValue) (\(e.type.rawValue)): penalty "
                + "\(MoneyText.of(a.penaltyCents)), interest \(MoneyText.of(a.interestCents)), principal "
                + "\(MoneyText.of(a.principalCents)); outstanding \(MoneyText.of(e.outstandingAfterCents))"
        case .loanClosed(let e):
            return "loan \(e.loanId) closed on \(e.closedOn) by payment \(e.paymentId)"
        case .commissionEarned(let e):
            return "agent \(e.agentId) earned \(MoneyText.of(e.commissionCents)) commission on payment "
                + "\(e.paymentId) of loan \(e.loanId) (\(e.rateBp) bp of interest \(MoneyText.of(e.interestCents)))"
        case .earningsReserved(let e):
            return "reserved \(MoneyText.of(e.amountCents)) of agent \(e.agentId)'s earnings for cash-out \(e.cashoutId)"
        case .earningsReleased(let e):
            return "released \(MoneyText.of(e.amountCents)) of agent \(e.agentId)'s earnings from cash-out "
                + "\(e.cashoutId)"
        case .cashoutRequested(let e):
            return "\(e.requestedBy) requested cash-out \(e.cashoutId) of \(MoneyText.of(e.amountCents)) for agent "
                + "\(e.agentId)"
        case .cashoutApproved(let e):
            return "\(e.approvedBy) approved cash-out \(e.cashoutId) of \(MoneyText.of(e.amountCents)) for agent "
                + "\(e.agentId)"
        case .cashoutRejected(let e):
            return "\(e.rejectedBy) rejected cash-out \(e.cashoutId) of \(MoneyText.of(e.amountCents)) for agent "
                + "\(e.agentId): \(e.reason)"
        case .commissionRateChanged(let e):
            let whose = e.agentId.map { "the commission rate of agent \($0)" } ?? "the default commission rate"
            return "\(e.changedBy) set \(whose) to \(e.rateBp) bp"
        case .invoiceCreated(let e):
            let t = e.totals
            return "\(e.createdBy) created invoice \(e.invoiceNumber) (\(e.invoiceId)) for party "
                + "\(e.customer.partyId): \(count(e.lines.count, "line")), total \(MoneyText.of(t.totalCents)) (tax "
                + "\(MoneyText.of(t.taxCents))), issued \(e.issueDate), due \(e.dueDate)"
        case .invoicePaymentRecorded(let e):
            return "\(e.recordedBy) recorded payment \(e.paymentId) of \(MoneyText.of(e.amountCents)) on invoice "
                + "\(e.invoiceId), paid on \(e.paidOn) by \(e.method.rawValue): paid \(MoneyText.of(e.paidTotalCents)), "
                + "balance \(MoneyText.of(e.balanceCents)) (\(e.status.rawValue))"
        case .invoicePaid(let e):
            return "invoice \(e.invoiceId) paid in full on \(e.paidOn): \(MoneyText.of(e.paidTotalCents))"
        case .invoiceCancelled(let e):
            return "\(e.cancelledBy) cancelled invoice \(e.invoiceId): \(e.reason)"
        case .invoiceNumberAllocated(let e):
            return "allocated \(e.invoiceNumber) (number \(e.sequence) of series \(e.series)) to invoice \(e.invoiceId)"
        case .personalDataErased(let e):
            return "\(e.erasedBy) erased the personal data of \(e.kind.rawValue.lowercased()) \(e.subjectId): "
                + e.reason
        }
    }


    /// "1 line", "3 lines".
    private static func count(_ n: Int, _ noun: String) -> String {
        "\(n) \(noun)\(n == 1 ? "" : "s")"
    }

    /// "name, phone changed": which fields an update carries, by name.
    private static func changed(_ fields: [(name: String, present: Bool)]) -> String {
        let names = fields.filter(\.present).map(\.name)
        return names.isEmpty ? "nothing changed" : names.joined(separator: ", ") + " changed"
    }
}
