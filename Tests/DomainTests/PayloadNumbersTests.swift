import Domain
import StrataCore
import Testing

/// A number JSON allows that a payload cannot hold (a fraction, an exponent, an integer beyond
/// 64 bits) reaches the rules as a `null` with a note of where it stood: judged as an integer
/// in its place would be, except where an integer is read, and never accepted.
@Suite("Payload numbers a payload cannot hold")
struct PayloadNumbersTests {
    private let context = DecisionContext(now: Timestamp("2026-11-20T10:00:00.000Z")!)

    /// The problems `Command.parse` finds in `payload`, written as a client sends it.
    private func problems(
        _ type: String, _ payload: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [String] {
        let (value, numbers) = try JSONParser.parseNotingNumbers(Array(payload.utf8))
        let members = try #require(value.objectValue, sourceLocation: sourceLocation)
        switch Command.parse(type: type, payload: members, numbers: numbers, context: context) {
        case .success(let valid):
            Issue.record("accepted: \(valid.command)", sourceLocation: sourceLocation)
            return []
        case .failure(let error):
            #expect(error.code == .invalid, sourceLocation: sourceLocation)
            #expect(error.reason == error.details?.first?.reason, sourceLocation: sourceLocation)
            return (error.details ?? []).map { "\($0.field) \($0.reason)" }
        }
    }

    private let loan =
        #""loanId":"L1","accountId":"A1","principalCents":5000000,"monthlyRateBp":400,"tenureMonths":6,"frequency":"MONTHLY""#

    @Test func inAnIntegerFieldAFractionOrExponentIsNotAnInteger() throws {
        for number in ["1500.5", "1e5", "5000000.0", "-0.0", "1E+400"] {
            let payload = "{" + loan.replacingOccurrences(of: "5000000", with: number) + "}"
            #expect(try problems("RequestLoan", payload) == ["principalCents NOT_AN_INTEGER"], "\(number)")
        }
    }

    /// Beyond 64 bits is beyond every range a payload allows: the field's own reason for a
    /// number past that end, as for any integer there.
    @Test func inAnIntegerFieldBeyond64BitsIsTheReasonOfThatEndOfItsRange() throws {
        let above = "{" + loan.replacingOccurrences(of: "5000000", with: "100000000000000000000") + "}"
        #expect(try problems("RequestLoan", above) == ["principalCents ABOVE_MAXIMUM"])
        let below = "{" + loan.replacingOccurrences(of: "5000000", with: "-100000000000000000000") + "}"
        #expect(try problems("RequestLoan", below) == ["principalCents MUST_BE_POSITIVE"])
        let tenure = "{" + loan.replacingOccurrences(of: #""tenureMonths":6"#, with: #""tenureMonths":9223372036854775808"#)
            + "}"
        #expect(try problems("RequestLoan", tenure) == ["tenureMonths OUT_OF_RANGE"])
        #expect(
            try problems("RequestCashout", #"{"cashoutId":"C1","agentId":"agent-7","amountCents":-1e30}"#)
                == ["amountCents NOT_AN_INTEGER"])
        #expect(
            try problems("RequestCashout", #"{"cashoutId":"C1","agentId":"agent-7","amountCents":-10000000000000000000}"#)
                == ["amountCents BELOW_MINIMUM_CASHOUT"])
    }

    /// Every problem is listed, each field once, in the order the rules read the fields.
    @Test func theyAreListedWithEveryOtherProblemEachFieldOnce() throws {
        let payload =
            #"{"loanId":"bad id!","accountId":2.5,"principalCents":1e3,"monthlyRateBp":99999999999999999999,"#
            + #""tenureMonths":99,"frequency":"DAILY","interestMethod":0.5,"requestedOn":"2999-01-01","colour":1.5}"#
        #expect(
            try problems("RequestLoan", payload) == [
                "loanId INVALID_IDENTIFIER", "accountId WRONG_TYPE", "principalCents NOT_AN_INTEGER",
                "monthlyRateBp OUT_OF_RANGE", "tenureMonths OUT_OF_RANGE", "frequency UNKNOWN_VALUE",
                "interestMethod WRONG_TYPE", "requestedOn FUTURE_DATE", "colour UNKNOWN_FIELD",
            ])
    }

    @Test func nestedFieldsAreNamedByTheirPaths() throws {
        let payload =
            #"{"invoiceId":"I1","customer":{"partyId":"p1","name":1.5},"issueDate":"2026-11-20","dueDate":"2026-12-20","#
            + #""lines":[{"description":"Work","quantityMilli":1.5e3,"unitPriceCents":1e2,"taxRateBp":1800,"#
            + #""discountBp":0.5},2.5,{"description":"Tea","quantityMilli":1000,"unitPriceCents":100,"#
            + #""taxRateBp":18446744073709551616}]}"#
        #expect(
            try problems("CreateInvoice", payload) == [
                "customer.name WRONG_TYPE", "lines[0].quantityMilli NOT_AN_INTEGER",
                "lines[0].unitPriceCents NOT_AN_INTEGER", "lines[0].discountBp NOT_AN_INTEGER", "lines[1] WRONG_TYPE",
                "lines[2].taxRateBp OUT_OF_RANGE",
            ])
    }

    /// Where the number stands a field is given, whatever its value, so an update is not
    /// "no changes"; and in an optional field it is a problem, never an absence.
    @Test func aNumberIsAValueNotAnAbsence() throws {
        #expect(try problems("UpdateAccount", #"{"accountId":"A1","name":1.5}"#) == ["name WRONG_TYPE"])
        #expect(
            try problems("UpdateAccount", #"{"accountId":"A1","phone":"+919845012345","address":1e400}"#)
                == ["address WRONG_TYPE"])
    }

    @Test func anUnknownTypeIsStillTheProblem() throws {
        #expect(try problems("LaunchRocket", #"{"fuel":1.5}"#) == ["type UNKNOWN_COMMAND_TYPE"])
    }

    /// Were the rules ever to pass a noted number by, the payload is still refused, the
    /// number itself the problem.
    @Test func aPayloadWithANotedNumberIsNeverAccepted() {
        let numbers = [
            JSONParser.UnrepresentableNumber(kind: .notAnInteger, path: [.key("elsewhere"), .index(3), .key("n")]),
            JSONParser.UnrepresentableNumber(kind: .aboveInt64, path: [.key("more")]),
        ]
        let parsed = Command.parse(type: "ApproveLoan", payload: ["loanId": "L1"], numbers: numbers, context: context)
        guard case .failure(let error) = parsed else {
            Issue.record("accepted: \(parsed)")
            return
        }
        #expect(error.code == .invalid && error.reason == "NOT_AN_INTEGER")
        #expect(
            error.details == [
                .init(field: "elsewhere[3].n", reason: "NOT_AN_INTEGER"), .init(field: "more", reason: "OUT_OF_RANGE"),
            ])
    }
}
