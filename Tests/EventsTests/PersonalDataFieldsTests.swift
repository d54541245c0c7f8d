import Events
import StrataCore
import Testing

/// Every `PersonalData` anywhere in a value, found by reflection: what the catalog declares
/// personal, whether or not `mappingPersonalData` knows it.
private func personalFields(of value: Any) -> [PersonalData] {
    if let personal = value as? PersonalData { return [personal] }
    return Mirror(reflecting: value).children.flatMap { personalFields(of: $0.value) }
}

/// One event of each type that carries personal data, every optional field present.
private let personalSamples: [StrataEvent] = [
    .userRegistered(UserRegistered(userId: "U1", username: "u1", email: "u1@example.com", role: .agent, status: .pending)),
    .profileUpdated(
        ProfileUpdated(
            userId: "U1", fullName: "Asha Rao", phone: "+919845012345", address: "Mysuru", dateOfBirth: "1990-01-31",
            updatedBy: "U1")),
    .accountOpened(
        AccountOpened(
            accountId: "A1", name: "Asha Rao", phone: "+919845012345", email: "asha@example.com",
            alternatePhone: "+919845000000", address: "Mysuru", assignedAgentId: "U1", openedBy: "U1", status: .active)),
    .accountUpdated(
        AccountUpdated(
            accountId: "A1", name: "Asha R", phone: "+919845012346", email: "asha.r@example.com",
            alternatePhone: "+919845000001", address: "Hassan", assignedAgentId: "U2", updatedBy: "U1")),
    .invoiceCreated(
        InvoiceCreated(
            invoiceId: "I1", series: "INV", invoiceNumber: "INV-000001",
            customer: InvoiceCustomer(partyId: "P1", name: "Acme Traders", taxId: "29ABCDE1234F1Z5", stateCode: "29"),
            issueDate: LocalDate("2026-11-20")!, dueDate: LocalDate("2026-12-20")!, lines: [],
            totals: InvoiceTotals(subtotalCents: 0, discountCents: 0, taxableCents: 0, taxCents: 0, totalCents: 0),
            createdBy: "U1")),
]

@Suite("Which fields are personal data, and whose")
struct PersonalDataFieldsTests {
    @Test func everyPersonalFieldOfTheCatalogIsMapped() throws {
        for event in personalSamples {
            let fields = personalFields(of: event)
            #expect(!fields.isEmpty)
            var seen: [PersonalData] = []
            let mapped = event.mappingPersonalData { value in
                seen.append(value)
                return PersonalData("<" + value.value + ">")
            }
            #expect(seen == fields, "\(event.eventType): every personal field, in declared order")
            #expect(personalFields(of: mapped) == fields.map { PersonalData("<" + $0.value + ">") })
            #expect(mapped.personalDataSubject == event.personalDataSubject)
        }
    }

    @Test func eachEventNamesItsSubject() {
        #expect(
            personalSamples.map { $0.personalDataSubject?.description }
                == ["user:U1", "user:U1", "account:A1", "account:A1", "party:P1"])
        let approved = StrataEvent.agentApproved(
            AgentApproved(agentId: "U1", approvedBy: "A", approvedAt: Timestamp("2026-11-20T10:00:00.000Z")!))
        #expect(approved.personalDataSubject == nil)
        #expect(personalFields(of: approved).isEmpty)
        #expect(approved.mappingPersonalData { _ in PersonalData("x") } == approved)
    }

    @Test func mappingLeavesEverythingElseAlone() {
        guard case .invoiceCreated(let original) = personalSamples[4],
            case .invoiceCreated(let mapped) = personalSamples[4].mappingPersonalData({ _ in PersonalData("x") })
        else {
            Issue.record("not an InvoiceCreated")
            return
        }
        var expected = original
        expected.customer.name = "x"
        expected.customer.taxId = "x"
        #expect(mapped == expected)
    }

    @Test func absentOptionalFieldsStayAbsent() {
        let sparse = StrataEvent.accountUpdated(AccountUpdated(accountId: "A1", assignedAgentId: "U2", updatedBy: "U1"))
        var calls = 0
        #expect(sparse.mappingPersonalData { value in calls += 1; return value } == sparse)
        #expect(calls == 0)
    }

    @Test func sealedValuesAreRecognisedByTheirPrefix() {
        #expect(PersonalData("pd1.account:A1:0011223344556677.AAAA").isSealed)
        #expect(!PersonalData("Asha Rao").isSealed)
        #expect(!PersonalData("PD1.x").isSealed)
        #expect(!PersonalData.erased.isSealed)
        #expect(DataSubject(.party, "P-1").description == "party:P-1")
        #expect(DataSubject("account:A1") == DataSubject(.account, "A1"))
        #expect(DataSubject("account:A1:x") == nil)
    }

    /// Subjects order as their descriptions do, though they are compared without making them.
    @Test func subjectsOrderAsTheirDescriptions() {
        let ids = ["A", "A1", "A-1", "a", "Z9", "_x", "0", "party", "user_1"]
        let subjects = SubjectKind.allCases.flatMap { kind in ids.map { DataSubject(kind, $0) } }
        for a in subjects {
            for b in subjects {
                #expect((a < b) == (a.description < b.description), "\(a) < \(b)")
            }
        }
    }
}
