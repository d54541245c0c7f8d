import Domain
import Events
import StrataCore
import StrataTesting
import Testing

@Suite("Decider smoke")
struct SmokeTests {
    @Test func loanFromRequestToClosing() {
        var s = DomainScenario.lending()
        let request = s.when(
            .requestLoan(RequestLoan(loanId: "L1", accountId: People.account, principalCents: 1_000_000, monthlyRateBp: 400, tenureMonths: 3, frequency: .monthly)),
            actor: People.agent)
        #expect(request.events?.count == 1)
        let approve = s.when(.approveLoan(ApproveLoan(loanId: "L1")), actor: People.admin)
        guard case .loanApproved(let approved)? = approve.events?.first else {
            Issue.record("\(approve)")
            return
        }
        #expect(approved.schedule.map(\.totalCents) == [360_349, 360_349, 360_348])
        s.advance(days: 30)
        let pay = s.when(
            .receivePayment(ReceivePayment(paymentId: "P1", loanId: "L1", amountCents: 1_081_046, paidOn: s.today)),
            actor: People.agent)
        #expect(pay.events?.map(\.eventType) == ["PaymentReceived", "CommissionEarned", "LoanClosed"], "\(pay)")
    }
}
