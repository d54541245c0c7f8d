import Domain
import Events
import StrataCore
import Testing

@Suite("Commands as JSON")
struct CommandCodingTests {
    /// DOMAIN.md's commands, written out by hand.
    @Test func everyCommandOfTheDomainIsKnown() {
        let expected = [
            "RegisterUser", "ApproveAgent", "RejectAgent", "UpdateProfile", "OpenAccount", "UpdateAccount",
            "ChangeAccountStatus", "RequestLoan", "ApproveLoan", "RejectLoan", "ReceivePayment", "SetCommissionRate",
            "RequestCashout", "ApproveCashout", "RejectCashout", "CreateInvoice", "RecordInvoicePayment", "CancelInvoice",
            "EraseSubject",
        ]
        #expect(Command.types == expected.sorted())
    }

    @Test func encodesAsTheBodysTypeAndPayload() throws {
        let command = Command.receivePayment(
            ReceivePayment(paymentId: "P1", loanId: "L1", amountCents: 360_349, paidOn: LocalDate("2026-12-20")!, method: .wallet))
        let text = String(decoding: try CanonicalJSON.encode(command), as: UTF8.self)
        #expect(
            text
                == #"{"payload":{"amountCents":360349,"loanId":"L1","method":"WALLET","paidOn":"2026-12-20","paymentId":"P1"},"type":"ReceivePayment"}"#
        )
        #expect(try CanonicalJSON.decode(Command.self, from: Array(text.utf8)) == command)
    }

    @Test func unknownTypesAreRefusedByTheDecoder() {
        #expect(throws: DecodingError.self) {
            try CanonicalJSON.decode(Command.self, from: Array(#"{"type":"Nope","payload":{}}"#.utf8))
        }
    }

    @Test func parseIsTheInverseOfEncode() throws {
        let context = DecisionContext(now: Timestamp("2026-11-20T10:00:00.000Z")!)
        let commands: [Command] = [
            .registerUser(RegisterUser(userId: "u1", username: "ravi", email: "ravi@example.com", role: .agent)),
            .requestLoan(
                RequestLoan(
                    loanId: "L1", accountId: "A1", principalCents: 5_000_000, monthlyRateBp: 400, tenureMonths: 12,
                    frequency: .weekly, interestMethod: .flat, requestedOn: LocalDate("2026-11-01")!)),
            .createInvoice(
                CreateInvoice(
                    invoiceId: "I1", customer: InvoiceCustomer(partyId: "p1", name: "Acme"),
                    issueDate: LocalDate("2026-11-20")!, dueDate: LocalDate("2026-12-20")!,
                    lines: [InvoiceLineRequest(description: "Work", quantityMilli: 1_500, unitPriceCents: 10_000, taxRateBp: 1_800)])),
            .eraseSubject(EraseSubject(subjectId: "A1", reason: "Borrower asked")),
        ]
        for command in commands {
            let parsed = try Command.parse(type: command.type, payload: #require(command.payloadJSON.objectValue), context: context)
            #expect(try parsed.get().command == command)
        }
    }
}
