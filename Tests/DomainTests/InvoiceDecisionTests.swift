import Domain
import Events
import StrataCore
import StrataTesting
import Testing

/// Steel rods (2.5 units at ₹480, 5% discount, 18% GST) and delivery (₹150, 12% GST).
private let rods = InvoiceLineRequest(
    description: "Steel rods 12 mm", quantityMilli: 2_500, unitPriceCents: 48_000, taxRateBp: 1_800, discountBp: 500)
private let delivery = InvoiceLineRequest(
    description: "Delivery", quantityMilli: 1_000, unitPriceCents: 15_000, taxRateBp: 1_200)
private let acme = InvoiceCustomer(partyId: "party-acme", name: "Acme Hardware Pvt Ltd", taxId: "29ABCDE1234F1Z5", stateCode: "29")

private func create(
    _ id: String, series: String? = nil, customer: InvoiceCustomer = acme, seller: String? = "29",
    lines: [InvoiceLineRequest] = [rods, delivery], issueDate: LocalDate = date("2026-11-20"),
    dueDate: LocalDate = date("2026-12-20")
) -> Command {
    .createInvoice(
        CreateInvoice(
            invoiceId: id, series: series, customer: customer, issueDate: issueDate, dueDate: dueDate, lines: lines,
            sellerStateCode: seller))
}

private func pay(_ paymentId: String, _ invoiceId: String, _ amount: Int64, on day: String = "2026-11-20") -> Command {
    .recordInvoicePayment(
        RecordInvoicePayment(paymentId: paymentId, invoiceId: invoiceId, amountCents: amount, paidOn: date(day), method: .bank))
}

/// The worked lines of `rods` and `delivery` within one state (CGST + SGST).
private let intraStateLines = [
    InvoiceLine(
        description: "Steel rods 12 mm", quantityMilli: 2_500, unitPriceCents: 48_000, taxRateBp: 1_800, discountBp: 500,
        amountCents: 120_000, discountCents: 6_000, taxableCents: 114_000, taxCents: 20_520, cgstCents: 10_260,
        sgstCents: 10_260),
    InvoiceLine(
        description: "Delivery", quantityMilli: 1_000, unitPriceCents: 15_000, taxRateBp: 1_200, amountCents: 15_000,
        discountCents: 0, taxableCents: 15_000, taxCents: 1_800, cgstCents: 900, sgstCents: 900),
]

private let intraStateTotals = InvoiceTotals(
    subtotalCents: 135_000, discountCents: 6_000, taxableCents: 129_000, taxCents: 22_320, cgstCents: 11_160,
    sgstCents: 11_160, totalCents: 151_320)

@Suite("Invoices")
struct InvoiceDecisionTests {
    @Test func anAgentIssuesTheFirstInvoiceOfTheDefaultSeries() {
        let s = DomainScenario.lending()
        let decision = s.decide(create("inv-1"), actor: People.agent)
        expectEvents(
            decision,
            [
                .invoiceNumberAllocated(
                    InvoiceNumberAllocated(series: "INV", sequence: 1, invoiceNumber: "INV-000001", invoiceId: "inv-1")),
                .invoiceCreated(
                    InvoiceCreated(
                        invoiceId: "inv-1", series: "INV", invoiceNumber: "INV-000001", customer: acme,
                        issueDate: date("2026-11-20"), dueDate: date("2026-12-20"), lines: intraStateLines,
                        sellerStateCode: "29", totals: intraStateTotals, createdBy: People.agent)),
            ])
        guard case .accepted(let accepted) = decision else { return }
        #expect(
            accepted.expectedVersions == [
                .user(People.agent): 2, .invoice("inv-1"): 0, .invoiceSeries("INV"): 0, .party("party-acme"): 0,
            ])
    }

    @Test func numbersAreGaplessPerSeriesAndCancelledNumbersStayUsed() {
        var s = DomainScenario.lending()
        s.when(create("inv-1"), actor: People.agent)
        s.when(create("inv-2"), actor: People.admin)
        s.when(.cancelInvoice(CancelInvoice(invoiceId: "inv-2", reason: "Issued twice")), actor: People.admin)
        s.when(create("b2b-1", series: "B2B"), actor: People.agent)
        s.when(create("inv-3"), actor: People.otherAgent)
        let numbers = s.history.compactMap { event -> String? in
            guard case .invoiceCreated(let created) = event else { return nil }
            return created.invoiceNumber
        }
        #expect(numbers == ["INV-000001", "INV-000002", "B2B-000001", "INV-000003"])
        #expect(s.version(of: .invoiceSeries("INV")) == 3)
        #expect(s.version(of: .invoiceSeries("B2B")) == 1)
    }

    /// Two invoices decided on the same state both take the next number, and both expect
    /// the series at the version they saw: whichever is written second is refused by the
    /// store (CONFLICT), decided again, and gets the following number.
    @Test func concurrentInvoicesCannotShareANumber() {
        var s = DomainScenario.lending()
        s.when(create("inv-1"), actor: People.agent)
        let first = s.decide(create("inv-a"), actor: People.agent)
        let second = s.decide(create("inv-b"), actor: People.otherAgent)
        guard case .accepted(let a) = first, case .accepted(let b) = second else {
            Issue.record("both should be accepted: \(first) \(second)")
            return
        }
        #expect(a.expectedVersions[.invoiceSeries("INV")] == 1)
        #expect(b.expectedVersions[.invoiceSeries("INV")] == 1)
        s.when(create("inv-a"), actor: People.agent)
        #expect(s.version(of: .invoiceSeries("INV")) != b.expectedVersions[.invoiceSeries("INV")])
        let retried = s.decide(create("inv-b"), actor: People.otherAgent)
        guard case .invoiceNumberAllocated(let allocated)? = retried.events?.first else {
            Issue.record("\(retried)")
            return
        }
        #expect(allocated.invoiceNumber == "INV-000003")
    }

    @Test func differentStatesGiveIntegratedTax() {
        let s = DomainScenario.lending()
        let decision = s.decide(create("inv-1", seller: "27"), actor: People.agent)
        guard case .invoiceCreated(let created)? = decision.events?.last else {
            Issue.record("\(decision)")
            return
        }
        #expect(created.lines.map(\.igstCents) == [20_520, 1_800])
        #expect(created.lines.allSatisfy { $0.cgstCents == nil && $0.sgstCents == nil })
        #expect(
            created.totals
                == InvoiceTotals(
                    subtotalCents: 135_000, discountCents: 6_000, taxableCents: 129_000, taxCents: 22_320,
                    igstCents: 22_320, totalCents: 151_320))
    }

    @Test func withoutBothStateCodesOnlyTheTaxIsStated() {
        let s = DomainScenario.lending()
        var customer = acme
        customer.stateCode = nil
        let decision = s.decide(create("inv-1", customer: customer), actor: People.agent)
        guard case .invoiceCreated(let created)? = decision.events?.last else {
            Issue.record("\(decision)")
            return
        }
        #expect(created.lines.allSatisfy { $0.cgstCents == nil && $0.sgstCents == nil && $0.igstCents == nil })
        #expect(created.totals.taxCents == 22_320)
        #expect(created.totals.cgstCents == nil && created.totals.igstCents == nil)
    }

    @Test func invalidInvoicesListEveryProblem() {
        let s = DomainScenario.lending()
        let badLine = InvoiceLineRequest(description: " ", quantityMilli: 0, unitPriceCents: -1, taxRateBp: 1_000)
        expectInvalid(
            s.decide(
                create("inv-1", lines: [rods, badLine], issueDate: date("2026-11-21"), dueDate: date("2026-11-19")),
                actor: People.agent),
            [
                ("issueDate", "FUTURE_DATE"),
                // A future issue date is still compared with the due date: every problem at once.
                ("dueDate", "DUE_BEFORE_ISSUE"),
                ("lines[1].description", "EMPTY"),
                ("lines[1].quantityMilli", "MUST_BE_POSITIVE"),
                ("lines[1].unitPriceCents", "OUT_OF_RANGE"),
                ("lines[1].taxRateBp", "NOT_A_TAX_SLAB"),
            ])
        expectInvalid(
            s.decide(create("inv-1", dueDate: date("2026-11-19")), actor: People.agent), [("dueDate", "DUE_BEFORE_ISSUE")])
        expectInvalid(s.decide(create("inv-1", lines: []), actor: People.agent), [("lines", "NO_LINES")])
        expectInvalid(
            s.decide(create("inv-1", lines: Array(repeating: delivery, count: 201)), actor: People.agent),
            [("lines", "TOO_MANY_LINES")])
        expectInvalid(
            s.decide(create("inv-1", series: "INV-2026"), actor: People.agent), [("series", "INVALID_FORMAT")])
        var customer = acme
        customer.taxId = "29 ABC"
        customer.stateCode = "KARNATAKA"
        expectInvalid(
            s.decide(create("inv-1", customer: customer), actor: People.agent),
            [("customer.taxId", "INVALID_FORMAT"), ("customer.stateCode", "INVALID_FORMAT")])
    }

    /// The subtotal and the total are amounts like any other: at most 10^15 cents. A line may
    /// come to 10^16 on its own, and sums of such invoices would overflow the read models'
    /// 64-bit totals per customer and per day.
    @Test func anInvoiceAboveTheLargestAmountIsInvalid() {
        let s = DomainScenario.lending()
        func line(_ quantityMilli: Int64, discountBp: Int? = nil, taxRateBp: Int = 0) -> InvoiceLineRequest {
            InvoiceLineRequest(
                description: "Bulk", quantityMilli: quantityMilli, unitPriceCents: InvoiceLineRequest.maximumUnitPriceCents,
                taxRateBp: taxRateBp, discountBp: discountBp)
        }
        // 100,000 units at 10^10 cents: 10^15 exactly, accepted; a thousandth of a unit more is not.
        guard case .invoiceCreated(let created)? = s.decide(create("inv-1", lines: [line(100_000_000)]), actor: People.agent).events?.last
        else {
            Issue.record("an invoice of exactly the largest amount is accepted")
            return
        }
        #expect(created.totals.totalCents == PayloadLimits.maximumAmountCents)
        expectInvalid(
            s.decide(create("inv-1", lines: [line(100_000_001)]), actor: People.agent), [("lines", "TOTAL_ABOVE_MAXIMUM")])
        // Tax can carry the total over; a full discount does not bring the subtotal back under.
        expectInvalid(
            s.decide(create("inv-1", lines: [line(90_000_000, taxRateBp: 1_800)]), actor: People.agent),
            [("lines", "TOTAL_ABOVE_MAXIMUM")])
        expectInvalid(
            s.decide(create("inv-1", lines: [line(1_000_000_000, discountBp: 10_000)]), actor: People.agent),
            [("lines", "TOTAL_ABOVE_MAXIMUM")])
        // The largest lines, 200 of them, at 28%: once refused for the sum, not overflowed.
        expectInvalid(
            s.decide(create("inv-1", lines: Array(repeating: line(1_000_000_000, taxRateBp: 2_800), count: 200)), actor: People.agent),
            [("lines", "TOTAL_ABOVE_MAXIMUM")])
    }

    @Test func taxSlabsAreConfigured() {
        var configuration = DomainConfiguration()
        configuration.taxSlabsBp = [0, 1_000]
        let s = DomainScenario.lending(configuration: configuration)
        expectInvalid(
            s.decide(create("inv-1"), actor: People.agent),
            [("lines[0].taxRateBp", "NOT_A_TAX_SLAB"), ("lines[1].taxRateBp", "NOT_A_TAX_SLAB")])
        let tenPercent = InvoiceLineRequest(description: "Service", quantityMilli: 1_000, unitPriceCents: 999, taxRateBp: 1_000)
        guard case .invoiceCreated(let created)? = s.decide(create("inv-1", lines: [tenPercent]), actor: People.agent).events?.last
        else {
            Issue.record("a configured slab should be accepted")
            return
        }
        // tax = round(999 × 1000 / 10000) = round(99.9) = 100; cgst = round(49.95) = 50.
        #expect(created.lines[0].taxCents == 100)
        #expect(created.lines[0].cgstCents == 50)
        #expect(created.lines[0].sgstCents == 50)
    }

    @Test func whoMayIssue() {
        var s = DomainScenario.lending()
        expectRefusal(s.decide(create("inv-1"), actor: People.pendingAgent), .forbidden, "ACTOR_NOT_APPROVED")
        expectRefusal(s.decide(create("inv-1"), actor: "nobody"), .forbidden, "UNKNOWN_ACTOR")
        s.when(create("inv-1"), actor: People.agent)
        expectRefusal(s.decide(create("inv-1"), actor: People.agent), .rejected, "INVOICE_ALREADY_EXISTS")
        expectRefusal(
            s.decide(create("inv-1"), actor: People.agent, expectedVersion: 0), .conflict, "WRONG_EXPECTED_VERSION")
    }

    @Test func noInvoiceForAnErasedCustomer() {
        var s = DomainScenario.lending()
        s.when(create("inv-1"), actor: People.agent)
        s.when(.eraseSubject(EraseSubject(subjectId: "party-acme", kind: .party, reason: "Customer request")), actor: People.admin)
        expectRefusal(s.decide(create("inv-2"), actor: People.agent), .rejected, "SUBJECT_ERASED")
    }

    @Test func paymentsSettleTheInvoice() {
        var s = DomainScenario.lending()
        s.when(create("inv-1"), actor: People.agent)
        expectEvents(
            s.when(pay("ip-1", "inv-1", 100_000), actor: People.otherAgent),
            [
                .invoicePaymentRecorded(
                    InvoicePaymentRecorded(
                        paymentId: "ip-1", invoiceId: "inv-1", amountCents: 100_000, paidOn: date("2026-11-20"),
                        method: .bank, recordedBy: People.otherAgent, paidTotalCents: 100_000, balanceCents: 51_320,
                        status: .partiallyPaid))
            ])
        expectRefusal(s.decide(pay("ip-2", "inv-1", 51_321), actor: People.agent), .rejected, "AMOUNT_EXCEEDS_BALANCE")
        expectRefusal(s.decide(pay("ip-1", "inv-1", 1), actor: People.agent), .rejected, "DUPLICATE_PAYMENT")
        expectEvents(
            s.when(pay("ip-2", "inv-1", 51_320), actor: People.admin),
            [
                .invoicePaymentRecorded(
                    InvoicePaymentRecorded(
                        paymentId: "ip-2", invoiceId: "inv-1", amountCents: 51_320, paidOn: date("2026-11-20"),
                        method: .bank, recordedBy: People.admin, paidTotalCents: 151_320, balanceCents: 0, status: .paid)),
                .invoicePaid(InvoicePaid(invoiceId: "inv-1", paidOn: date("2026-11-20"), paidTotalCents: 151_320)),
            ])
        expectRefusal(s.decide(pay("ip-3", "inv-1", 1), actor: People.agent), .rejected, "INVOICE_ALREADY_PAID")
    }

    @Test func paymentRefusals() {
        var s = DomainScenario.lending()
        s.when(create("inv-1", issueDate: date("2026-11-10")), actor: People.agent)
        expectRefusal(s.decide(pay("ip-1", "nope", 1), actor: People.agent), .notFound, "INVOICE_NOT_FOUND")
        expectRefusal(
            s.decide(pay("ip-1", "inv-1", 1, on: "2026-11-09"), actor: People.agent), .rejected, "PAYMENT_BEFORE_ISSUE")
        expectInvalid(s.decide(pay("ip-1", "inv-1", 0, on: "2026-11-21"), actor: People.agent), [
            ("amountCents", "MUST_BE_POSITIVE"), ("paidOn", "FUTURE_DATE"),
        ])
        expectInvalid(
            s.decide(
                type: "RecordInvoicePayment",
                payload: ["paymentId": "ip-1", "invoiceId": "inv-1", "amountCents": 1, "paidOn": "2026-11-20"],
                actor: People.agent),
            [("method", "REQUIRED")])
        expectRefusal(s.decide(pay("ip-1", "inv-1", 1), actor: People.pendingAgent), .forbidden, "ACTOR_NOT_APPROVED")
        s.when(.cancelInvoice(CancelInvoice(invoiceId: "inv-1", reason: "Wrong customer")), actor: People.agent)
        expectRefusal(s.decide(pay("ip-1", "inv-1", 1), actor: People.agent), .rejected, "INVOICE_CANCELLED")
    }

    @Test func cancelling() {
        var s = DomainScenario.lending()
        s.when(create("inv-1"), actor: People.agent)
        s.when(create("inv-2"), actor: People.agent)
        let cancel1 = Command.cancelInvoice(CancelInvoice(invoiceId: "inv-1", reason: "Customer changed the order"))
        expectRefusal(s.decide(cancel1, actor: People.otherAgent), .forbidden, "NOT_INVOICE_CREATOR")
        expectRefusal(
            s.decide(.cancelInvoice(CancelInvoice(invoiceId: "nope", reason: "x")), actor: People.agent), .notFound,
            "INVOICE_NOT_FOUND")
        expectEvents(
            s.when(cancel1, actor: People.agent),
            [.invoiceCancelled(InvoiceCancelled(invoiceId: "inv-1", reason: "Customer changed the order", cancelledBy: People.agent))])
        expectRefusal(s.decide(cancel1, actor: People.admin), .rejected, "INVOICE_ALREADY_CANCELLED")
        s.when(pay("ip-1", "inv-2", 1_000), actor: People.agent)
        expectRefusal(
            s.decide(.cancelInvoice(CancelInvoice(invoiceId: "inv-2", reason: "x")), actor: People.admin), .rejected,
            "INVOICE_HAS_PAYMENTS")
        expectInvalid(
            s.decide(.cancelInvoice(CancelInvoice(invoiceId: "inv-2", reason: "")), actor: People.admin),
            [("reason", "EMPTY")])
    }
}
