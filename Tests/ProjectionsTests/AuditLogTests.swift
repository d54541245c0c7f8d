import EventStore
import Events
import Projections
import StrataCore
import StrataTesting
import Testing

/// Every personal value the events below carry; none may reach the audit log.
private let personalValues = [
    "ravi@example.com", "Ravi Kumar", "+919800000001", "7 MG Road, Bengaluru", "1990-04-01", "Meena Devi",
    "+919800000002", "meena@example.com", "+919800000004", "12 Lake Road, Pune", "+919800000003",
    "14 Hill Road, Pune", "Asha Traders", "29ABCDE1234F1Z5",
]

/// One event of every catalog type: (event, stream, actor, action, summary).
private let everyType: [(StrataEvent, String, String, String, String)] = [
    (
        .userRegistered(
            UserRegistered(
                userId: "agent-7", username: "ravi_k", email: "ravi@example.com", role: .agent, status: .pending)),
        "user-agent-7", "agent-7", "REGISTER_USER", "user agent-7 registered as AGENT (PENDING)"
    ),
    (
        .agentApproved(
            AgentApproved(
                agentId: "agent-7", approvedBy: "admin-1", approvedAt: Timestamp("2026-11-02T09:00:01.000Z")!)),
        "user-agent-7", "admin-1", "APPROVE_AGENT", "admin-1 approved agent agent-7"
    ),
    (
        .agentRejected(AgentRejected(agentId: "agent-9", rejectedBy: "admin-1", reason: "incomplete documents")),
        "user-agent-9", "admin-1", "REJECT_AGENT", "admin-1 rejected agent agent-9: incomplete documents"
    ),
    (
        .profileUpdated(
            ProfileUpdated(
                userId: "agent-7", fullName: "Ravi Kumar", phone: "+919800000001", address: "7 MG Road, Bengaluru",
                dateOfBirth: "1990-04-01", updatedBy: "agent-7")),
        "user-agent-7", "agent-7", "UPDATE_PROFILE",
        "agent-7 updated the profile of user agent-7: fullName, phone, address, dateOfBirth changed"
    ),
    (
        .accountOpened(
            AccountOpened(
                accountId: "A1", name: "Meena Devi", phone: "+919800000002", email: "meena@example.com",
                alternatePhone: "+919800000004", address: "12 Lake Road, Pune", assignedAgentId: "agent-7",
                openedBy: "agent-7", status: .active)),
        "account-A1", "agent-7", "CREATE_ACCOUNT", "agent-7 opened account A1 for agent agent-7 (ACTIVE)"
    ),
    (
        .accountUpdated(
            AccountUpdated(
                accountId: "A1", phone: "+919800000003", address: "14 Hill Road, Pune", assignedAgentId: "agent-8",
                updatedBy: "admin-1")),
        "account-A1", "admin-1", "UPDATE_ACCOUNT",
        "admin-1 updated account A1: phone, address, assignedAgentId changed; now assigned to agent agent-8"
    ),
    (
        .accountStatusChanged(
            AccountStatusChanged(accountId: "A1", status: .suspended, reason: "under review", changedBy: "admin-1")),
        "account-A1", "admin-1", "CHANGE_ACCOUNT_STATUS", "admin-1 set account A1 to SUSPENDED: under review"
    ),
    (
        .loanRequested(
            LoanRequested(
                loanId: "L1", accountId: "A1", agentId: "agent-7", principalCents: 5_000_000, monthlyRateBp: 400,
                tenureMonths: 6, frequency: .monthly, interestMethod: .reducing,
                requestedOn: LocalDate("2026-11-01")!, requestedBy: "agent-7")),
        "loan-L1", "agent-7", "CREATE_LOAN",
        "agent-7 requested loan L1 of 50,000.00 on account A1 (6 months, MONTHLY, 400 bp/month, REDUCING)"
    ),
    (
        .loanRequested(
            LoanRequested(
                loanId: "L2", accountId: "A1", agentId: "agent-7", principalCents: 12_345_678, monthlyRateBp: 300,
                tenureMonths: 12, frequency: .weekly, interestMethod: .flat, requestedOn: LocalDate("2026-11-01")!,
                requestedBy: "admin-1")),
        "loan-L2", "admin-1", "CREATE_LOAN",
        "admin-1 requested loan L2 of 123,456.78 on account A1 for agent agent-7 (12 months, WEEKLY, "
            + "300 bp/month, FLAT)"
    ),
    (
        .loanApproved(
            LoanApproved(
                loanId: "L1", approvedBy: "admin-1", approvedOn: LocalDate("2026-11-02")!,
                schedule: [
                    ScheduleEntry(
                        number: 1, dueDate: LocalDate("2026-12-02")!, principalCents: 1_650_000,
                        interestCents: 200_000, totalCents: 1_850_000, remainingBalanceCents: 3_350_000),
                    ScheduleEntry(
                        number: 2, dueDate: LocalDate("2027-01-01")!, principalCents: 1_716_000,
                        interestCents: 134_000, totalCents: 1_850_000, remainingBalanceCents: 1_634_000),
                    ScheduleEntry(
                        number: 3, dueDate: LocalDate("2027-01-31")!, principalCents: 1_634_000,
                        interestCents: 65360, totalCents: 1_699_360, remainingBalanceCents: 0),
                ])),
        "loan-L1", "admin-1", "APPROVE_LOAN",
        "admin-1 approved loan L1 on 2026-11-02: 3 installments of 18,500.00 (last 16,993.60) due 2026-12-02 to "
            + "2027-01-31, total 53,993.60"
    ),
    (
        .loanRejected(LoanRejected(loanId: "L2", rejectedBy: "admin-1", reason: "over limit")),
        "loan-L2", "admin-1", "REJECT_LOAN", "admin-1 rejected loan L2: over limit"
    ),
    (
        .paymentReceived(
            PaymentReceived(
                paymentId: "P1", loanId: "L1", amountCents: 1_850_000, paidOn: LocalDate("2026-12-02")!, method: .cash,
                receivedBy: "agent-7", type: .regular,
                allocation: PaymentAllocation(penaltyCents: 0, interestCents: 200_000, principalCents: 1_650_000),
                perInstallment: [
                    InstallmentAllocation(
                        number: 1, penaltyAccruedCents: 0, penaltyCents: 0, interestCents: 200_000,
                        principalCents: 1_650_000)
                ],
                outstandingAfterCents: 3_549_360)),
        "loan-L1", "agent-7", "RECEIVE_PAYMENT",
        "agent-7 received payment P1 of 18,500.00 on loan L1, paid on 2026-12-02 by CASH (REGULAR): penalty 0.00, "
            + "interest 2,000.00, principal 16,500.00; outstanding 35,493.60"
    ),
    (
        .commissionEarned(
            CommissionEarned(
                agentId: "agent-7", loanId: "L1", paymentId: "P1", interestCents: 200_000, rateBp: 1000,
                commissionCents: 20000)),
        "agent-agent-7", "agent-7", "EARN_COMMISSION",
        "agent agent-7 earned 200.00 commission on payment P1 of loan L1 (1000 bp of interest 2,000.00)"
    ),
    (
        .loanClosed(LoanClosed(loanId: "L1", closedOn: LocalDate("2027-01-31")!, paymentId: "P3")),
        "loan-L1", "agent-7", "CLOSE_LOAN", "loan L1 closed on 2027-01-31 by payment P3"
    ),
    (
        .cashoutRequested(
            CashoutRequested(cashoutId: "C1", agentId: "agent-7", amountCents: 15000, requestedBy: "agent-7")),
        "cashout-C1", "agent-7", "CASHOUT_REQUEST", "agent-7 requested cash-out C1 of 150.00 for agent agent-7"
    ),
    (
        .earningsReserved(EarningsReserved(agentId: "agent-7", cashoutId: "C1", amountCents: 15000)),
        "agent-agent-7", "agent-7", "RESERVE_EARNINGS", "reserved 150.00 of agent agent-7's earnings for cash-out C1"
    ),
    (
        .cashoutApproved(
            CashoutApproved(cashoutId: "C1", agentId: "agent-7", amountCents: 15000, approvedBy: "admin-1")),
        "cashout-C1", "admin-1", "CASHOUT_APPROVED", "admin-1 approved cash-out C1 of 150.00 for agent agent-7"
    ),
    (
        .cashoutRejected(
            CashoutRejected(
                cashoutId: "C2", agentId: "agent-7", amountCents: 12000, rejectedBy: "admin-1",
                reason: "insufficient documents")),
        "cashout-C2", "admin-1", "CASHOUT_REJECTED",
        "admin-1 rejected cash-out C2 of 120.00 for agent agent-7: insufficient documents"
    ),
    (
        .earningsReleased(EarningsReleased(agentId: "agent-7", cashoutId: "C2", amountCents: 12000)),
        "agent-agent-7", "admin-1", "RELEASE_EARNINGS", "released 120.00 of agent agent-7's earnings from cash-out C2"
    ),
    (
        .commissionRateChanged(CommissionRateChanged(agentId: "agent-7", rateBp: 1200, changedBy: "admin-1")),
        "settings-global", "admin-1", "UPDATE_COMMISSION", "admin-1 set the commission rate of agent agent-7 to 1200 bp"
    ),
    (
        .commissionRateChanged(CommissionRateChanged(rateBp: 900, changedBy: "admin-1")),
        "settings-global", "admin-1", "UPDATE_COMMISSION", "admin-1 set the default commission rate to 900 bp"
    ),
    (
        .invoiceNumberAllocated(
            InvoiceNumberAllocated(series: "INV", sequence: 1, invoiceNumber: "INV-000001", invoiceId: "I1")),
        "invoiceseries-INV", "admin-1", "ALLOCATE_INVOICE_NUMBER",
        "allocated INV-000001 (number 1 of series INV) to invoice I1"
    ),
    (
        .invoiceCreated(
            InvoiceCreated(
                invoiceId: "I1", series: "INV", invoiceNumber: "INV-000001",
                customer: InvoiceCustomer(
                    partyId: "P1", name: "Asha Traders", taxId: "29ABCDE1234F1Z5", stateCode: "29"),
                issueDate: LocalDate("2026-11-02")!, dueDate: LocalDate("2026-12-02")!,
                lines: [
                    InvoiceLine(
                        description: "Consulting", quantityMilli: 1000, unitPriceCents: 1_000_000, taxRateBp: 1800,
                        amountCents: 1_000_000, discountCents: 0, taxableCents: 1_000_000, taxCents: 180_000,
                        cgstCents: 90000, sgstCents: 90000)
                ],
                sellerStateCode: "29",
                totals: InvoiceTotals(
                    subtotalCents: 1_000_000, discountCents: 0, taxableCents: 1_000_000, taxCents: 180_000,
                    cgstCents: 90000, sgstCents: 90000, totalCents: 1_180_000),
                createdBy: "admin-1")),
        "invoice-I1", "admin-1", "CREATE_INVOICE",
        "admin-1 created invoice INV-000001 (I1) for party P1: 1 line, total 11,800.00 (tax 1,800.00), "
            + "issued 2026-11-02, due 2026-12-02"
    ),
    (
        .invoicePaymentRecorded(
            InvoicePaymentRecorded(
                paymentId: "IP1", invoiceId: "I1", amountCents: 1_180_000, paidOn: LocalDate("2026-11-20")!,
                method: .bank, recordedBy: "admin-1", paidTotalCents: 1_180_000, balanceCents: 0, status: .paid)),
        "invoice-I1", "admin-1", "RECORD_INVOICE_PAYMENT",
        "admin-1 recorded payment IP1 of 11,800.00 on invoice I1, paid on 2026-11-20 by BANK: paid 11,800.00, "
            + "balance 0.00 (PAID)"
    ),
    (
        .invoicePaid(InvoicePaid(invoiceId: "I1", paidOn: LocalDate("2026-11-20")!, paidTotalCents: 1_180_000)),
        "invoice-I1", "admin-1", "INVOICE_PAID", "invoice I1 paid in full on 2026-11-20: 11,800.00"
    ),
    (
        .invoiceCancelled(InvoiceCancelled(invoiceId: "I2", reason: "issued twice", cancelledBy: "admin-1")),
        "invoice-I2", "admin-1", "CANCEL_INVOICE", "admin-1 cancelled invoice I2: issued twice"
    ),
    (
        .personalDataErased(
            PersonalDataErased(subjectId: "P1", kind: .party, erasedBy: "admin-1", reason: "customer request")),
        "party-P1", "admin-1", "ERASE_PERSONAL_DATA", "admin-1 erased the personal data of party P1: customer request"
    ),
]

@Suite struct AuditLogTests {
    private func logged() throws -> ProjectionHarness {
        let h = try ProjectionHarness(ReadModels.audit, name: "audit")
        for (event, stream, actor, _, _) in everyType { try h.given(event, stream: stream, actor: actor) }
        return h
    }

    @Test func everyEventTypeBecomesOneRowWithItsActionEntityActorAndSummary() throws {
        #expect(Set(everyType.map { $0.0.eventType }) == Set(EventRegistry.eventTypes))
        let h = try logged()
        let expected: [[ProjectionValue]] = everyType.enumerated().map { i, item in
            let (event, stream, actor, action, summary) = item
            let category = String(stream.prefix(while: { $0 != "-" }))
            return [
                .int(i + 1), .text(actor), .text(action), .text(stream), .text(category), .text(event.eventType),
                .text(summary), .text("cmd-\(i + 1)"), nil,
            ]
        }
        let rows = try h.rows(
            """
            SELECT position, actor, action, entity, entity_type, event_type, summary, command_id, correlation_id
            FROM audit_log ORDER BY position
            """)
        #expect(rows.count == expected.count)
        for (row, want) in zip(rows, expected) { #expect(row == want) }
        #expect(
            try h.rows("SELECT recorded_at, hash FROM audit_log ORDER BY position")
                == h.recorded.map { [.text($0.recordedAt), .text($0.hash)] })
        #expect(
            try h.rows("SELECT position FROM audit_log WHERE actor = 'agent-7' AND action = 'CREATE_LOAN'") == [[8]])
    }

    @Test func theActionOfEveryEventIsTheOneThatIsLogged() {
        for (event, _, _, action, _) in everyType { #expect(AuditLog.action(of: event) == action) }
        // The list `strata query audit --action` checks a code against: every action, once.
        #expect(Set(AuditLog.actions) == Set(everyType.map { $0.3 }))
        #expect(Set(AuditLog.actions).count == AuditLog.actions.count)
    }

    @Test func noRowHoldsAnyPersonalValueOfTheEvents() throws {
        let h = try logged()
        let rows = try h.rows("SELECT * FROM audit_log ORDER BY position")
        #expect(rows.count == everyType.count)
        for row in rows {
            for case .text(let text) in row {
                for value in personalValues { #expect(!text.contains(value), "\(text) holds \(value)") }
            }
        }
    }

    @Test func aBrokenChainStopsTheLogBeforeTheTamperedEvent() throws {
        let h = try ProjectionHarness(ReadModels.audit, name: "audit")
        let first = try h.record(everyType[0].0, stream: everyType[0].1, actor: everyType[0].2)
        let second = try h.record(everyType[1].0, stream: everyType[1].1, actor: everyType[1].2)
        let tampered = RecordedEvent(
            position: second.position, stream: second.stream, version: second.version, type: second.type,
            schemaVersion: second.schemaVersion, recordedAt: second.recordedAt, data: second.data,
            metadata: Array(#"{"actor":"admin-2","commandId":"cmd-2"}"#.utf8), prevHash: second.prevHash,
            hash: second.hash)
        try h.database.apply([first, tampered])
        #expect(h.database.stop?.error.contains("hash chain is broken") == true)
        #expect(try h.rows("SELECT position, action FROM audit_log") == [[1, "REGISTER_USER"]])
    }

    /// A schedule whose total overflows is in no store Strata wrote; its entry is still written,
    /// where the process trapped before.
    @Test func aScheduleTotalBeyondSixtyFourBitsIsSaidSo() {
        let entries = (1...2).map { number in
            ScheduleEntry(
                number: number, dueDate: LocalDate("2026-12-02")!, principalCents: .max, interestCents: 0,
                totalCents: .max, remainingBalanceCents: 0)
        }
        let event = StrataEvent.loanApproved(
            LoanApproved(loanId: "L1", approvedBy: "admin-1", approvedOn: LocalDate("2026-11-02")!, schedule: entries))
        #expect(AuditLog.summary(of: event).hasSuffix(", total beyond 64 bits of cents"))
    }

    @Test func amountsReadAsUnitsWithTwoDecimalsAndThousandsSeparators() {
        #expect(MoneyText.of(0) == "0.00")
        #expect(MoneyText.of(5) == "0.05")
        #expect(MoneyText.of(99) == "0.99")
        #expect(MoneyText.of(100_000) == "1,000.00")
        #expect(MoneyText.of(99_999) == "999.99")
        #expect(MoneyText.of(1_234_567) == "12,345.67")
        #expect(MoneyText.of(100_000_000) == "1,000,000.00")
        #expect(MoneyText.of(-1_234_567) == "-12,345.67")
        #expect(MoneyText.of(-5) == "-0.05")
        #expect(MoneyText.of(Int64.min) == "-92,233,720,368,547,758.08")
        #expect(MoneyText.of(Int64.max) == "92,233,720,368,547,758.07")
    }

    /// The digits written by hand against the plain reading of the rule (units grouped by
    /// three from the right, two decimals), on random amounts of every size.
    @Test func amountsMatchTheRuleOnRandomValues() {
        var random = SplitMix64(seed: 0x3_0E7)
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...19, using: &random)
            let bound = digits == 19 ? Int64.max : (1..<digits).reduce(Int64(9)) { value, _ in value * 10 + 9 }
            let cents = Int64.random(in: -bound...bound, using: &random)
            let units = String(cents.magnitude / 100)
            var grouped: [String] = []
            var end = units.endIndex
            while end > units.startIndex {
                let start = units.index(end, offsetBy: -3, limitedBy: units.startIndex) ?? units.startIndex
                grouped.insert(String(units[start..<end]), at: 0)
                end = start
            }
            let fraction = cents.magnitude % 100
            let expected = (cents < 0 ? "-" : "") + grouped.joined(separator: ",") + "." + (fraction < 10 ? "0" : "")
                + String(fraction)
            #expect(MoneyText.of(cents) == expected, "\(cents)")
        }
    }
}
