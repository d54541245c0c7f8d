import Events
import Foundation
import StrataCore
import Testing

// MARK: - Samples

/// Realistic dates and instants of the samples.
private func date(_ text: String) -> LocalDate { LocalDate(text)! }
private func instant(_ text: String) -> Timestamp { Timestamp(text)! }

/// A ₹10,000.00 loan at 4% a month over 3 monthly installments (REDUCING), approved on
/// 2026-11-20, as the schedule rules of DOMAIN.md compute it.
let sampleSchedule = [
    ScheduleEntry(
        number: 1, dueDate: date("2026-12-20"), principalCents: 320_349, interestCents: 40_000, totalCents: 360_349,
        remainingBalanceCents: 679_651),
    ScheduleEntry(
        number: 2, dueDate: date("2027-01-19"), principalCents: 333_163, interestCents: 27_186, totalCents: 360_349,
        remainingBalanceCents: 346_488),
    ScheduleEntry(
        number: 3, dueDate: date("2027-02-18"), principalCents: 346_488, interestCents: 13_860, totalCents: 360_348,
        remainingBalanceCents: 0),
]

/// The first installment of that loan, paid on its due date through a wallet.
let samplePayment = PaymentReceived(
    paymentId: "pay-01JD3X7Q", loanId: "loan-01JD2K9M", amountCents: 360_349, paidOn: date("2026-12-20"),
    method: .wallet, externalRef: "0x9f3c2a71e4b8d05c", notes: "First installment, paid via UPI wallet",
    receivedBy: "agent-7", type: .regular,
    allocation: PaymentAllocation(penaltyCents: 0, interestCents: 40_000, principalCents: 320_349),
    perInstallment: [InstallmentAllocation(number: 1, penaltyAccruedCents: 0, penaltyCents: 0, interestCents: 40_000, principalCents: 320_349)],
    outstandingAfterCents: 720_697)

/// Steel rods (2.5 units at ₹480, 5% discount, 18% GST) and delivery (₹150, 12% GST),
/// sold within one state (CGST + SGST).
let sampleInvoice = InvoiceCreated(
    invoiceId: "inv-01JD4A2B", series: "INV", invoiceNumber: "INV-000042",
    customer: InvoiceCustomer(
        partyId: "party-acme", name: "Acme Hardware Pvt Ltd", taxId: "29ABCDE1234F1Z5", stateCode: "29"),
    issueDate: date("2026-11-20"), dueDate: date("2026-12-20"),
    lines: [
        InvoiceLine(
            description: "Steel rods 12 mm", quantityMilli: 2_500, unitPriceCents: 48_000, taxRateBp: 1_800,
            discountBp: 500, amountCents: 120_000, discountCents: 6_000, taxableCents: 114_000, taxCents: 20_520,
            cgstCents: 10_260, sgstCents: 10_260),
        InvoiceLine(
            description: "Delivery", quantityMilli: 1_000, unitPriceCents: 15_000, taxRateBp: 1_200,
            amountCents: 15_000, discountCents: 0, taxableCents: 15_000, taxCents: 1_800, cgstCents: 900,
            sgstCents: 900),
    ],
    sellerStateCode: "29", notes: "Thank you for your business",
    totals: InvoiceTotals(
        subtotalCents: 135_000, discountCents: 6_000, taxableCents: 129_000, taxCents: 22_320, cgstCents: 11_160,
        sgstCents: 11_160, totalCents: 151_320),
    createdBy: "agent-7")

/// One sample of every event type in the catalog, optional fields present.
let samples: [StrataEvent] = [
    .userRegistered(
        UserRegistered(userId: "agent-7", username: "ravi.k", email: "ravi.kumar@example.in", role: .agent, status: .pending)),
    .agentApproved(AgentApproved(agentId: "agent-7", approvedBy: "admin-1", approvedAt: instant("2026-11-20T10:00:00.123Z"))),
    .agentRejected(AgentRejected(agentId: "agent-9", rejectedBy: "admin-1", reason: "Could not verify identity documents")),
    .profileUpdated(
        ProfileUpdated(
            userId: "agent-7", fullName: "Ravi Kumar", phone: "+919812345678", address: "12 MG Road, Bengaluru 560001",
            dateOfBirth: "1990-04-17", updatedBy: "agent-7")),
    .accountOpened(
        AccountOpened(
            accountId: "acct-01JD1Z", name: "Lakshmi Devi", phone: "+919876543210", email: "lakshmi.devi@example.in",
            alternatePhone: "+918023456789", address: "4/2 Temple Street, Mysuru 570001", assignedAgentId: "agent-7",
            openedBy: "agent-7", status: .active)),
    .accountUpdated(
        AccountUpdated(
            accountId: "acct-01JD1Z", name: "Lakshmi D. Rao", phone: "+919876500000", email: "lakshmi.rao@example.in",
            alternatePhone: "+918023400000", address: "9 Lake View Road, Mysuru 570002", assignedAgentId: "agent-12",
            updatedBy: "admin-1")),
    .accountStatusChanged(
        AccountStatusChanged(
            accountId: "acct-01JD1Z", status: .suspended, reason: "Borrower moved out of the service area",
            changedBy: "admin-1")),
    .loanRequested(
        LoanRequested(
            loanId: "loan-01JD2K9M", accountId: "acct-01JD1Z", agentId: "agent-7", principalCents: 1_000_000,
            monthlyRateBp: 400, tenureMonths: 3, frequency: .monthly, interestMethod: .reducing,
            requestedOn: date("2026-11-18"), requestedBy: "agent-7")),
    .loanApproved(
        LoanApproved(loanId: "loan-01JD2K9M", approvedBy: "admin-1", approvedOn: date("2026-11-20"), schedule: sampleSchedule)),
    .loanRejected(LoanRejected(loanId: "loan-01JD2Q", rejectedBy: "admin-1", reason: "Existing loan overdue by 45 days")),
    .paymentReceived(samplePayment),
    .loanClosed(LoanClosed(loanId: "loan-01JD2K9M", closedOn: date("2027-02-18"), paymentId: "pay-01JF8R")),
    .commissionEarned(
        CommissionEarned(
            agentId: "agent-7", loanId: "loan-01JD2K9M", paymentId: "pay-01JD3X7Q", interestCents: 40_000, rateBp: 1_000,
            commissionCents: 4_000)),
    .earningsReserved(EarningsReserved(agentId: "agent-7", cashoutId: "co-01JE", amountCents: 25_000)),
    .earningsReleased(EarningsReleased(agentId: "agent-7", cashoutId: "co-01JF", amountCents: 40_000)),
    .cashoutRequested(CashoutRequested(cashoutId: "co-01JE", agentId: "agent-7", amountCents: 25_000, requestedBy: "agent-7")),
    .cashoutApproved(CashoutApproved(cashoutId: "co-01JE", agentId: "agent-7", amountCents: 25_000, approvedBy: "admin-1")),
    .cashoutRejected(
        CashoutRejected(
            cashoutId: "co-01JF", agentId: "agent-7", amountCents: 40_000, rejectedBy: "admin-1",
            reason: "Bank details not on file")),
    .commissionRateChanged(CommissionRateChanged(agentId: "agent-7", rateBp: 1_200, changedBy: "admin-1")),
    .invoiceCreated(sampleInvoice),
    .invoicePaymentRecorded(
        InvoicePaymentRecorded(
            paymentId: "ipay-01JE", invoiceId: "inv-01JD4A2B", amountCents: 100_000, paidOn: date("2026-12-01"),
            method: .bank, recordedBy: "agent-7", paidTotalCents: 100_000, balanceCents: 51_320, status: .partiallyPaid)),
    .invoicePaid(InvoicePaid(invoiceId: "inv-01JD4A2B", paidOn: date("2026-12-15"), paidTotalCents: 151_320)),
    .invoiceCancelled(
        InvoiceCancelled(invoiceId: "inv-01JD4C", reason: "Issued to the wrong customer", cancelledBy: "admin-1")),
    .invoiceNumberAllocated(
        InvoiceNumberAllocated(series: "INV", sequence: 42, invoiceNumber: "INV-000042", invoiceId: "inv-01JD4A2B")),
    .personalDataErased(
        PersonalDataErased(
            subjectId: "acct-01JD1Z", kind: .account, erasedBy: "admin-1", reason: "Borrower's erasure request of 2027-03-01"
        )),
]

/// Events whose optional fields are all (or mostly) absent.
let sparseSamples: [StrataEvent] = [
    .profileUpdated(ProfileUpdated(userId: "agent-7", phone: "+919812345678", updatedBy: "agent-7")),
    .accountOpened(
        AccountOpened(
            accountId: "acct-02", name: "Mohan Das", phone: "+919900112233", address: "Near bus stand, Hassan",
            assignedAgentId: "agent-7", openedBy: "admin-1", status: .active)),
    .accountUpdated(AccountUpdated(accountId: "acct-02", assignedAgentId: "agent-12", updatedBy: "admin-1")),
    .paymentReceived(
        PaymentReceived(
            paymentId: "pay-02", loanId: "loan-01JD2K9M", amountCents: 100_000, paidOn: date("2027-01-25"), method: .cash,
            receivedBy: "agent-7", type: .partial,
            allocation: PaymentAllocation(penaltyCents: 2_162, interestCents: 27_186, principalCents: 70_652),
            perInstallment: [
                InstallmentAllocation(number: 2, penaltyAccruedCents: 2_162, penaltyCents: 2_162, interestCents: 27_186, principalCents: 70_652)
            ],
            outstandingAfterCents: 622_859)),
    .commissionRateChanged(CommissionRateChanged(rateBp: 1_000, changedBy: "admin-1")),
    .invoiceCreated(
        InvoiceCreated(
            invoiceId: "inv-02", series: "INV", invoiceNumber: "INV-000043",
            customer: InvoiceCustomer(partyId: "party-walkin", name: "Walk-in customer"),
            issueDate: date("2026-11-21"), dueDate: date("2026-11-21"),
            lines: [
                InvoiceLine(
                    description: "Consulting hour", quantityMilli: 1_500, unitPriceCents: 200_000, taxRateBp: 0,
                    amountCents: 300_000, discountCents: 0, taxableCents: 300_000, taxCents: 0)
            ],
            totals: InvoiceTotals(
                subtotalCents: 300_000, discountCents: 0, taxableCents: 300_000, taxCents: 0, totalCents: 300_000),
            createdBy: "admin-1")),
]

extension StrataEvent: CustomTestStringConvertible {
    public var testDescription: String { eventType }
}

// MARK: - Helpers

func canonicalText(_ event: StrataEvent) throws -> String {
    String(decoding: try event.canonicalData(), as: UTF8.self)
}

func canonicalObject(_ event: StrataEvent, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String:
    JSONValue]
{
    let value = try JSONParser.parse(try event.canonicalData())
    return try #require(value.objectValue, "event data is not a JSON object", sourceLocation: sourceLocation)
}

/// Encodes, decodes through the registry at the current version, and checks nothing changed.
func expectRoundTrip(_ event: StrataEvent, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let bytes = try event.canonicalData()
    let decoded = try EventRegistry.decode(type: event.eventType, schemaVersion: event.schemaVersion, data: bytes)
    #expect(decoded == event, sourceLocation: sourceLocation)
    #expect(try decoded.canonicalData() == bytes, "re-encoding changed the bytes", sourceLocation: sourceLocation)
}

/// Every (path, value) pair under `value`, paths like `lines[0].taxCents`.
func leaves(_ value: JSONValue, path: String = "") -> [(path: String, key: String, value: JSONValue)] {
    switch value {
    case .object(let members):
        return members.flatMap { key, member in
            let memberPath = path.isEmpty ? key : path + "." + key
            switch member {
            case .object, .array: return leaves(member, path: memberPath)
            default: return [(memberPath, key, member)]
            }
        }
    case .array(let elements):
        return elements.enumerated().flatMap { index, element in
            let elementPath = path + "[\(index)]"
            switch element {
            case .object, .array: return leaves(element, path: elementPath)
            default: return [(elementPath, "", element)]
            }
        }
    default:
        return [(path, "", value)]
    }
}

// MARK: - Tests

@Suite("Event catalog")
struct CatalogTests {
    /// The catalog of DOMAIN.md, written out by hand.
    static let expectedTypes = [
        // user
        "UserRegistered", "AgentApproved", "AgentRejected", "ProfileUpdated",
        // account
        "AccountOpened", "AccountUpdated", "AccountStatusChanged",
        // loan
        "LoanRequested", "LoanApproved", "LoanRejected", "PaymentReceived", "LoanClosed",
        // agent earnings
        "CommissionEarned", "EarningsReserved", "EarningsReleased",
        // cashout
        "CashoutRequested", "CashoutApproved", "CashoutRejected",
        // settings
        "CommissionRateChanged",
        // invoice
        "InvoiceCreated", "InvoicePaymentRecorded", "InvoicePaid", "InvoiceCancelled",
        // invoiceseries
        "InvoiceNumberAllocated",
        // personal data
        "PersonalDataErased",
    ]

    @Test func registryListsExactlyTheCatalog() {
        #expect(EventRegistry.eventTypes == Self.expectedTypes.sorted())
        #expect(EventRegistry.eventTypes.count == 25)
        #expect(EventRegistry.eventTypes == EventRegistry.eventTypes.sorted())
    }

    @Test(arguments: ["AgentApproved", "LoanApproved", "PaymentReceived", "InvoiceCreated"])
    func briefEventsAreInTheCatalog(type: String) {
        #expect(EventRegistry.eventTypes.contains(type))
        #expect(EventRegistry.currentSchemaVersion(of: type) != nil)
    }

    @Test func samplesCoverEveryTypeOnce() {
        #expect(samples.map(\.eventType).sorted() == EventRegistry.eventTypes)
    }

    @Test func currentSchemaVersions() {
        for type in EventRegistry.eventTypes {
            #expect(EventRegistry.currentSchemaVersion(of: type) == (type == "PaymentReceived" ? 2 : 1), "\(type)")
        }
        #expect(EventRegistry.currentSchemaVersion(of: "LoanExploded") == nil)
        #expect(EventRegistry.currentSchemaVersion(of: "") == nil)
    }

    @Test(arguments: samples)
    func wrapperAgreesWithPayload(event: StrataEvent) {
        let payloadType = type(of: event.payload)
        #expect(event.eventType == payloadType.eventType)
        #expect(event.eventType == event.payload.eventType)
        #expect(event.schemaVersion == payloadType.schemaVersion)
        #expect(EventRegistry.currentSchemaVersion(of: event.eventType) == event.schemaVersion)
    }

    @Test(arguments: samples + sparseSamples)
    func roundTripsThroughTheRegistry(event: StrataEvent) throws {
        try expectRoundTrip(event)
    }

    /// The direct encoder gives what Foundation's encoder, parsed back, gave: the bytes
    /// every stored event was hashed over do not depend on which path wrote them.
    @Test(arguments: samples + sparseSamples)
    func canonicalDataEqualsFoundationsEncodingCanonicalised(event: StrataEvent) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let viaFoundation = CanonicalJSON.bytes(try JSONParser.parse(try encoder.encode(event.payload)))
        #expect(try event.canonicalData() == viaFoundation)
    }

    /// The hand-written writers (`ScheduleEntry`, and `LocalDate` inside it) against
    /// Foundation's encoding canonicalised, on random values across their whole ranges.
    @Test func handWrittenScheduleEntriesEqualTheirCodableForm() throws {
        var rng = SystemRandomNumberGenerator()
        let encoder = JSONEncoder()
        // Years 0 to about 20,000: past 9999 the date is written the long way, as text.
        let days = (LocalDate(year: 1, month: 1, day: 1)!.daysSinceEpoch - 366)...4_000_000
        for _ in 0..<2000 {
            let entry = ScheduleEntry(
                number: Int.random(in: Int.min...Int.max, using: &rng),
                dueDate: LocalDate(daysSinceEpoch: Int.random(in: days, using: &rng)),
                principalCents: Int64.random(in: Int64.min...Int64.max, using: &rng),
                interestCents: Int64.random(in: -1000...1000, using: &rng), totalCents: 0,
                remainingBalanceCents: Int64.random(in: 0...Int64.max, using: &rng))
            let viaFoundation = CanonicalJSON.bytes(try JSONParser.parse(try encoder.encode(entry)))
            #expect(try CanonicalJSON.encode(entry) == viaFoundation)
            var direct: [UInt8] = []
            try entry.writeCanonicalJSON(to: &direct)
            #expect(direct == viaFoundation)
        }
    }

    @Test(arguments: samples + sparseSamples)
    func canonicalDataIsCanonicalWithSortedKeys(event: StrataEvent) throws {
        let bytes = try event.canonicalData()
        // Canonicalising again changes nothing: keys sorted at every level, no whitespace.
        #expect(CanonicalJSON.bytes(try JSONParser.parse(bytes)) == bytes)
        #expect(try event.canonicalData() == event.payload.canonicalData())
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains("null"))
        #expect(!text.contains("\n"))
    }

    @Test func canonicalBytesOfAgentApproved() throws {
        let event = samples.first { $0.eventType == "AgentApproved" }!
        #expect(
            try canonicalText(event)
                == #"{"agentId":"agent-7","approvedAt":"2026-11-20T10:00:00.123Z","approvedBy":"admin-1"}"#)
    }

    @Test func canonicalBytesOfLoanApproved() throws {
        let event = StrataEvent.loanApproved(
            LoanApproved(
                loanId: "loan-01JD2K9M", approvedBy: "admin-1", approvedOn: LocalDate("2026-11-20")!,
                schedule: Array(sampleSchedule.prefix(1))))
        #expect(
            try canonicalText(event)
                == #"{"approvedBy":"admin-1","approvedOn":"2026-11-20","loanId":"loan-01JD2K9M","schedule":[{"dueDate":"2026-12-20","interestCents":40000,"number":1,"principalCents":320349,"remainingBalanceCents":679651,"totalCents":360349}]}"#
        )
    }

    @Test func canonicalBytesOfPaymentReceived() throws {
        #expect(
            try canonicalText(.paymentReceived(samplePayment))
                == #"{"allocation":{"interestCents":40000,"penaltyCents":0,"principalCents":320349},"amountCents":360349,"externalRef":"0x9f3c2a71e4b8d05c","loanId":"loan-01JD2K9M","method":"WALLET","notes":"First installment, paid via UPI wallet","outstandingAfterCents":720697,"paidOn":"2026-12-20","paymentId":"pay-01JD3X7Q","perInstallment":[{"interestCents":40000,"number":1,"penaltyAccruedCents":0,"penaltyCents":0,"principalCents":320349}],"receivedBy":"agent-7","type":"REGULAR"}"#
        )
    }

    @Test func absentOptionalsAreOmittedNotNull() throws {
        let global = try canonicalText(.commissionRateChanged(CommissionRateChanged(rateBp: 1_000, changedBy: "admin-1")))
        #expect(global == #"{"changedBy":"admin-1","rateBp":1000}"#)

        let profile = try canonicalObject(sparseSamples[0])
        #expect(Set(profile.keys) == ["userId", "phone", "updatedBy"])

        let opened = try canonicalObject(sparseSamples[1])
        #expect(opened["email"] == nil)
        #expect(opened["alternatePhone"] == nil)

        let updated = try canonicalObject(sparseSamples[2])
        #expect(Set(updated.keys) == ["accountId", "assignedAgentId", "updatedBy"])

        let payment = try canonicalObject(sparseSamples[3])
        #expect(payment["externalRef"] == nil)
        #expect(payment["notes"] == nil)
        #expect(payment["method"] == "CASH")

        let invoice = try canonicalObject(sparseSamples[5])
        #expect(invoice["sellerStateCode"] == nil)
        #expect(invoice["notes"] == nil)
        #expect(invoice["customer"] == ["partyId": "party-walkin", "name": "Walk-in customer"])
        let line = try #require(invoice["lines"]?.arrayValue?.first?.objectValue)
        for key in ["discountBp", "cgstCents", "sgstCents", "igstCents"] {
            #expect(line[key] == nil, "line.\(key)")
            #expect(invoice["totals"]?[key] == nil, "totals.\(key)")
        }
    }

    @Test func interStateInvoiceCarriesIGSTOnly() throws {
        var invoice = sampleInvoice
        invoice.sellerStateCode = "27"
        invoice.lines = invoice.lines.map { line in
            var line = line
            line.igstCents = line.taxCents
            line.cgstCents = nil
            line.sgstCents = nil
            return line
        }
        invoice.totals.igstCents = invoice.totals.taxCents
        invoice.totals.cgstCents = nil
        invoice.totals.sgstCents = nil
        let event = StrataEvent.invoiceCreated(invoice)
        try expectRoundTrip(event)
        let totals = try #require(try canonicalObject(event)["totals"])
        #expect(totals["igstCents"] == 22_320)
        #expect(totals["cgstCents"] == nil)
        #expect(totals["sgstCents"] == nil)
    }

    @Test(arguments: samples + sparseSamples)
    func moneyRatesAndQuantitiesAreIntegers(event: StrataEvent) throws {
        let value = try JSONParser.parse(try event.canonicalData())
        for leaf in leaves(value) where leaf.key.hasSuffix("Cents") || leaf.key.hasSuffix("Bp") || leaf.key.hasSuffix("Milli") {
            #expect(leaf.value.integerValue != nil, "\(event.eventType).\(leaf.path) is not an integer: \(leaf.value)")
        }
    }

    @Test func moneyFieldsAreWrittenAsPlainIntegers() throws {
        let text = try canonicalText(.invoiceCreated(sampleInvoice))
        #expect(text.contains(#""totalCents":151320"#))
        #expect(text.contains(#""quantityMilli":2500"#))
        #expect(text.contains(#""taxRateBp":1800"#))
        let loan = try canonicalText(samples.first { $0.eventType == "LoanRequested" }!)
        #expect(loan.contains(#""principalCents":1000000"#))
        #expect(loan.contains(#""monthlyRateBp":400"#))
        // The extremes of Int64 survive.
        let huge = StrataEvent.cashoutRequested(
            CashoutRequested(cashoutId: "co-max", agentId: "agent-7", amountCents: .max, requestedBy: "agent-7"))
        #expect(try canonicalText(huge).contains(#""amountCents":9223372036854775807"#))
        try expectRoundTrip(huge)
    }

    @Test func personalDataIsAPlainStringOnTheWire() throws {
        let opened = try canonicalObject(samples.first { $0.eventType == "AccountOpened" }!)
        #expect(opened["name"] == "Lakshmi Devi")
        #expect(opened["address"] == "4/2 Temple Street, Mysuru 570001")
        let profile = try canonicalObject(samples.first { $0.eventType == "ProfileUpdated" }!)
        #expect(profile["dateOfBirth"] == "1990-04-17")
        let invoice = try canonicalObject(.invoiceCreated(sampleInvoice))
        #expect(invoice["customer"]?["taxId"] == "29ABCDE1234F1Z5")
    }

    @Test func datesAndInstantsUseTheirWireFormats() throws {
        let approved = try canonicalObject(samples.first { $0.eventType == "AgentApproved" }!)
        #expect(approved["approvedAt"] == "2026-11-20T10:00:00.123Z")
        let requested = try canonicalObject(samples.first { $0.eventType == "LoanRequested" }!)
        #expect(requested["requestedOn"] == "2026-11-18")
        #expect(requested["frequency"] == "MONTHLY")
        #expect(requested["interestMethod"] == "REDUCING")
    }

    @Test func vocabularySpellings() {
        #expect(Role.allCases.map(\.rawValue) == ["ADMIN", "AGENT"])
        #expect(UserStatus.allCases.map(\.rawValue) == ["PENDING", "APPROVED", "REJECTED"])
        #expect(AccountStatus.allCases.map(\.rawValue) == ["ACTIVE", "INACTIVE", "SUSPENDED"])
        #expect(LoanFrequency.allCases.map(\.rawValue) == ["WEEKLY", "BI_MONTHLY", "MONTHLY"])
        #expect(LoanFrequency.allCases.map(\.periodDays) == [7, 15, 30])
        #expect(LoanFrequency.biMonthly.rawValue == "BI_MONTHLY")
        #expect(InterestMethod.allCases.map(\.rawValue) == ["REDUCING", "FLAT"])
        #expect(PaymentMethod.allCases.map(\.rawValue) == ["CASH", "WALLET", "BANK"])
        #expect(PaymentType.allCases.map(\.rawValue) == ["REGULAR", "PARTIAL", "PENALTY", "FULL"])
        #expect(InvoiceStatus.allCases.map(\.rawValue) == ["ISSUED", "PARTIALLY_PAID", "PAID", "CANCELLED"])
        #expect(SubjectKind.allCases.map(\.rawValue) == ["ACCOUNT", "PARTY", "USER"])
    }
}
