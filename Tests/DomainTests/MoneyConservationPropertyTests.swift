import Domain
import Events
import StrataCore
import StrataTesting
import Testing

// Property: money is conserved by loan payments. For 300 pseudo-random valid loans (every
// frequency, both interest methods, principals 1...100,000,000) and random payment
// sequences (amounts from 1 cent to everything owed, non-decreasing dates from approval to
// well past the last due date so that penalty accrues), the real deciders are driven
// through `DomainScenario`, and after every payment:
//
// - amountCents == penalty + interest + principal of its allocation == the sum of its
//   perInstallment parts (component by component too);
// - outstandingAfterCents >= 0 and == the previous outstanding + penalty accrued now − amount;
// - principal allocated so far never exceeds the principal, and equals it once closed;
// - LoanClosed (closedOn = paidOn) comes exactly when outstandingAfterCents == 0, and later
//   payments are refused LOAN_NOT_ACTIVE;
// - CommissionEarned.commissionCents == round-half-away(interest × rate / 10000) at the
//   rate in force, and there is no CommissionEarned when that is 0.
//
// A small model of the installments, kept from the schedule and from what each payment
// reports, also checks the penalty each installment accrues (DOMAIN's formula), the
// oldest-first/penalty-interest-principal order, the payment type, and that an amount is
// refused AMOUNT_EXCEEDS_OUTSTANDING only when it is above everything owed.

// MARK: - Seeded generator (file-private)

extension SplitMix64 {
    fileprivate mutating func int64(_ range: ClosedRange<Int64>) -> Int64 { Int64.random(in: range, using: &self) }
    fileprivate mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    fileprivate mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }
}

// MARK: - Model (file-private)

/// `numerator / denominator` rounded half away from zero, for numerator >= 0.
private func conservationRound(_ numerator: Int64, _ denominator: Int64) -> Int64 {
    (2 * numerator + denominator) / (2 * denominator)
}

private struct ConservationInstallment {
    let number: Int
    let dueDate: LocalDate
    var unpaidPrincipal: Int64
    var unpaidInterest: Int64
    var unpaidPenalty: Int64 = 0

    var unpaidScheduled: Int64 { unpaidPrincipal + unpaidInterest }
    var owed: Int64 { unpaidScheduled + unpaidPenalty }

    /// DOMAIN: round(unpaid × days / 1000), days = paidOn − max(dueDate, last accrual date) when positive.
    func accrual(lastAccrual: LocalDate?, on paidOn: LocalDate) -> Int64 {
        let from = max(dueDate, lastAccrual ?? dueDate)
        let days = Int64(from.days(until: paidOn))
        guard days > 0, unpaidScheduled > 0 else { return 0 }
        return conservationRound(unpaidScheduled * days, 1_000)
    }
}

private enum ConservationRateSetup: CustomStringConvertible {
    case configured
    case global(Int)
    case own(Int, global: Int?)

    var rateInForce: Int {
        switch self {
        case .configured: 1_000
        case .global(let rate): rate
        case .own(let rate, _): rate
        }
    }

    var description: String {
        switch self {
        case .configured: "configured 1000 bp"
        case .global(let rate): "global \(rate) bp"
        case .own(let rate, let global): "own \(rate) bp (global \(global.map(String.init) ?? "unset"))"
        }
    }
}

/// What one property run saw, to check the runs covered what they should.
private struct ConservationCoverage {
    var loans = 0
    var closed = 0
    var payments = 0
    var refusedAsTooMuch = 0
    var penaltyAccrued = 0
    var commissions = 0
    var types: [PaymentType: Int] = [:]
    var frequencies: Set<LoanFrequency> = []
    var methods: Set<InterestMethod> = []

    mutating func add(_ other: ConservationCoverage) {
        loans += other.loans
        closed += other.closed
        payments += other.payments
        refusedAsTooMuch += other.refusedAsTooMuch
        penaltyAccrued += other.penaltyAccrued
        commissions += other.commissions
        types.merge(other.types, uniquingKeysWith: +)
        frequencies.formUnion(other.frequencies)
        methods.formUnion(other.methods)
    }
}

/// One random loan driven from request to (usually) closing. Stops at its first failure.
private struct ConservationRun {
    let seed: UInt64
    var rng: SplitMix64
    var s = DomainScenario.lending()
    var coverage = ConservationCoverage()
    var loanContext = ""
    var paymentContext = "setup"
    var failed = false

    init(seed: UInt64) {
        self.seed = seed
        self.rng = SplitMix64(seed: seed)
    }

    mutating func fail(_ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        if !failed {
            Issue.record("seed \(seed): \(loanContext); \(paymentContext): \(message)", sourceLocation: sourceLocation)
        }
        failed = true
    }

    mutating func check(
        _ condition: Bool, _ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if !condition { fail(message(), sourceLocation: sourceLocation) }
    }

    /// A principal in 1...100,000,000: as many loans of each number of digits, plus the edges.
    mutating func principal() -> Int64 {
        switch rng.int(1...12) {
        case 1: return rng.int64(1...9)
        case 2: return rng.int64(99_000_000...100_000_000)
        default:
            let digits = rng.int(1...8)
            var low: Int64 = 1
            for _ in 1..<digits { low *= 10 }
            return rng.int64(low...(low * 10 - 1))
        }
    }

    mutating func run(loanIndex: Int) {
        let loanId = "L\(loanIndex)"
        let principal: Int64 = loanIndex == 0 ? 1 : loanIndex == 1 ? 100_000_000 : principal()
        let rate = rng.int(300...500)
        let tenure = rng.int(2...12)
        let frequency = LoanFrequency.allCases.randomElement(using: &rng)!
        let method = InterestMethod.allCases.randomElement(using: &rng)!
        let requestedOn = s.today.adding(days: -rng.int(0...90))
        let approvedOn = requestedOn.adding(days: rng.int(0...requestedOn.days(until: s.today)))
        let setup: ConservationRateSetup =
            switch rng.int(1...3) {
            case 1: .configured
            case 2: .global(rng.int(0...3_000))
            default: .own(rng.int(0...3_000), global: rng.chance(50) ? rng.int(0...3_000) : nil)
            }
        loanContext =
            "\(loanId) \(principal) cents at \(rate) bp × \(tenure) months \(frequency.rawValue) \(method.rawValue), "
            + "approved \(approvedOn), commission \(setup)"
        coverage.loans = 1
        coverage.frequencies = [frequency]
        coverage.methods = [method]
        paymentContext = "setup"

        switch setup {
        case .configured: break
        case .global(let rate):
            setUp(.setCommissionRate(SetCommissionRate(rateBp: rate)))
        case .own(let rate, let global):
            if let global { setUp(.setCommissionRate(SetCommissionRate(rateBp: global))) }
            setUp(.setCommissionRate(SetCommissionRate(agentId: People.agent, rateBp: rate)))
        }
        setUp(
            .requestLoan(
                RequestLoan(
                    loanId: loanId, accountId: People.account, principalCents: principal, monthlyRateBp: rate,
                    tenureMonths: tenure, frequency: frequency, interestMethod: method, requestedOn: requestedOn)),
            actor: rng.chance(70) ? People.agent : People.admin)
        let approval = setUp(.approveLoan(ApproveLoan(loanId: loanId, approvedOn: approvedOn)))
        guard !failed, case .loanApproved(let approved)? = approval?.first else {
            fail("approval gave no LoanApproved: \(String(describing: approval))")
            return
        }
        let schedule = approved.schedule
        check(!schedule.isEmpty, "empty schedule")
        check(schedule.reduce(0) { $0 + $1.principalCents } == principal, "schedule principals do not sum to the principal")
        guard !failed, let lastDue = schedule.last?.dueDate else { return }

        var installments = schedule.map {
            ConservationInstallment(
                number: $0.number, dueDate: $0.dueDate, unpaidPrincipal: $0.principalCents,
                unpaidInterest: $0.interestCents)
        }
        var outstanding = schedule.reduce(0) { $0 + $1.totalCents }
        var principalAllocated: Int64 = 0
        var lastPaidOn: LocalDate?
        var paidOn = approvedOn
        let horizon = lastDue.adding(days: rng.int(20...240))
        let period = frequency.periodDays
        let plannedPayments = rng.int(1...40)
        // Most loans end with a payment of everything owed; some are left open.
        let settles = rng.chance(85)
        var closed = false
        var attempt = 0

        while !closed && !failed && attempt < plannedPayments + (settles ? 1 : 0) {
            attempt += 1
            let settle = settles && attempt > plannedPayments

            // A non-decreasing date from approval to the horizon (well past the last due date).
            switch rng.int(1...10) {
            case 1...2: break
            case 3...7: paidOn = paidOn.adding(days: rng.int(1...(2 * period)))
            default: paidOn = paidOn.adding(days: rng.int(1...120))
            }
            if paidOn > horizon { paidOn = horizon }
            if paidOn > s.today { s.advance(days: s.today.days(until: paidOn)) }

            // What the model says is owed on paidOn.
            let accruals = installments.map { $0.accrual(lastAccrual: lastPaidOn, on: paidOn) }
            let owedNow = installments.reduce(0) { $0 + $1.owed } + accruals.reduce(0, +)
            guard owedNow > 0 else {
                fail("nothing owed on an active loan")
                return
            }
            let oldest = installments.indices.first { installments[$0].owed + accruals[$0] > 0 }!
            let amount: Int64
            if settle {
                amount = owedNow
            } else {
                switch rng.int(1...40) {
                case 1...4: amount = rng.int64(1...min(owedNow, 100))
                case 5...16: amount = installments[oldest].owed + accruals[oldest]
                case 17...20:
                    let penalty = installments[oldest].unpaidPenalty + accruals[oldest]
                    amount = penalty > 0 ? rng.int64(1...penalty) : rng.int64(1...owedNow)
                case 21: amount = owedNow
                case 22...23: amount = owedNow + rng.int64(1...1_000)
                case 24...36: amount = rng.int64(1...min(owedNow, 2 * (installments[oldest].owed + accruals[oldest])))
                default: amount = rng.int64(1...owedNow)
                }
            }

            let paymentId = "P\(attempt)"
            let actor = rng.chance(70) ? People.agent : People.admin
            paymentContext =
                "\(paymentId) of \(amount) on \(paidOn) by \(actor) (model owes \(owedNow))"
            let decision = s.when(
                .receivePayment(
                    ReceivePayment(paymentId: paymentId, loanId: loanId, amountCents: amount, paidOn: paidOn)),
                actor: actor)

            let accepted: Decision.Accepted
            switch decision {
            case .refused(let error):
                guard error.code == .rejected, error.reason == "AMOUNT_EXCEEDS_OUTSTANDING" else {
                    fail("unexpected refusal \(error)")
                    return
                }
                // Skipped; but only an amount above everything owed may be refused so.
                check(amount > owedNow, "refused AMOUNT_EXCEEDS_OUTSTANDING though \(owedNow) is owed")
                coverage.refusedAsTooMuch += 1
                continue
            case .accepted(let a):
                accepted = a
            }
            check(amount <= owedNow, "accepted an amount above the \(owedNow) owed")

            let events = accepted.events
            guard case .paymentReceived(let payment)? = events.first else {
                fail("first event is not PaymentReceived: \(events)")
                return
            }
            coverage.payments += 1
            coverage.types[payment.type, default: 0] += 1
            check(events.first?.stream == .loan(loanId), "PaymentReceived not on the loan's stream")
            check(
                payment.paymentId == paymentId && payment.loanId == loanId && payment.amountCents == amount
                    && payment.paidOn == paidOn && payment.receivedBy == actor && payment.method == .cash,
                "PaymentReceived does not carry the command: \(payment)")

            // The amount is exactly the allocation, and exactly the per-installment parts.
            let allocation = payment.allocation
            let parts = payment.perInstallment
            check(
                amount == allocation.penaltyCents + allocation.interestCents + allocation.principalCents,
                "allocation \(allocation) does not add up to the amount")
            check(
                amount == parts.reduce(0) { $0 + $1.penaltyCents + $1.interestCents + $1.principalCents },
                "perInstallment \(parts) does not add up to the amount")
            check(
                allocation.penaltyCents == parts.reduce(0) { $0 + $1.penaltyCents }
                    && allocation.interestCents == parts.reduce(0) { $0 + $1.interestCents }
                    && allocation.principalCents == parts.reduce(0) { $0 + $1.principalCents },
                "allocation \(allocation) is not the sum of perInstallment \(parts)")
            check(
                parts.allSatisfy {
                    $0.penaltyAccruedCents >= 0 && $0.penaltyCents >= 0 && $0.interestCents >= 0 && $0.principalCents >= 0
                },
                "negative part in \(parts)")
            check(zip(parts, parts.dropFirst()).allSatisfy { $0.number < $1.number }, "parts out of order: \(parts)")

            // Penalty accrued now: each installment's, as DOMAIN computes it.
            let reported = Dictionary(parts.map { ($0.number, $0) }, uniquingKeysWith: { first, _ in first })
            check(parts.allSatisfy { (1...installments.count).contains($0.number) }, "unknown installment in \(parts)")
            let accruedNow = parts.reduce(0) { $0 + $1.penaltyAccruedCents }
            if accruedNow > 0 { coverage.penaltyAccrued += 1 }
            for (index, installment) in installments.enumerated() {
                let part = reported[installment.number]
                let accrued = part?.penaltyAccruedCents ?? 0
                check(
                    accrued == accruals[index],
                    "installment \(installment.number) accrued \(accrued), DOMAIN says \(accruals[index])")
                let paid = (part?.penaltyCents ?? 0) + (part?.interestCents ?? 0) + (part?.principalCents ?? 0)
                check(
                    (part != nil) == (accruals[index] > 0 || paid > 0),
                    "installment \(installment.number) touched = \(part != nil) but accrued \(accruals[index]), paid \(paid)")
            }
            guard !failed else { return }

            // Apply the parts to the model: never more than owed, oldest first, and within an
            // installment penalty, then interest, then principal.
            for (index, _) in installments.enumerated() {
                let accrued = accruals[index]
                installments[index].unpaidPenalty += accrued
                guard let part = reported[installments[index].number] else { continue }
                check(
                    part.penaltyCents <= installments[index].unpaidPenalty
                        && part.interestCents <= installments[index].unpaidInterest
                        && part.principalCents <= installments[index].unpaidPrincipal,
                    "installment \(part.number) paid more than it owed: \(part)")
                installments[index].unpaidPenalty -= part.penaltyCents
                installments[index].unpaidInterest -= part.interestCents
                installments[index].unpaidPrincipal -= part.principalCents
            }
            for (index, installment) in installments.enumerated() {
                guard let part = reported[installment.number] else { continue }
                let paid = part.penaltyCents + part.interestCents + part.principalCents
                if paid > 0 {
                    check(
                        installments[..<index].allSatisfy { $0.owed == 0 },
                        "installment \(installment.number) was paid while an older one is still owed")
                }
                if part.interestCents > 0 {
                    check(installment.unpaidPenalty == 0, "interest paid before penalty on \(installment.number)")
                }
                if part.principalCents > 0 {
                    check(
                        installment.unpaidPenalty == 0 && installment.unpaidInterest == 0,
                        "principal paid before penalty and interest on \(installment.number)")
                }
            }

            // Outstanding: never negative; previous + accrued now − amount; the model's.
            let after = payment.outstandingAfterCents
            check(after >= 0, "outstandingAfterCents \(after) < 0")
            check(
                after == outstanding + accruedNow - amount,
                "outstandingAfterCents \(after) != \(outstanding) + \(accruedNow) − \(amount)")
            check(
                after == installments.reduce(0) { $0 + $1.owed },
                "outstandingAfterCents \(after) is not what the installments still owe")

            // Principal allocated so far.
            principalAllocated += allocation.principalCents
            check(principalAllocated <= principal, "principal allocated \(principalAllocated) > principal \(principal)")

            // The type, judged after allocation.
            let expectedType: PaymentType =
                if after == 0 { .full }
                else if allocation.interestCents == 0 && allocation.principalCents == 0 { .penalty }
                else if installments[oldest].owed > 0 { .partial }
                else { .regular }
            check(payment.type == expectedType, "type \(payment.type.rawValue), expected \(expectedType.rawValue)")

            // Commission at the rate in force, none when it rounds to 0.
            var rest = events.dropFirst()
            let rateBp = setup.rateInForce
            let commission = conservationRound(allocation.interestCents * Int64(rateBp), 10_000)
            if commission > 0 {
                coverage.commissions += 1
                check(
                    rest.first
                        == .commissionEarned(
                            CommissionEarned(
                                agentId: People.agent, loanId: loanId, paymentId: paymentId,
                                interestCents: allocation.interestCents, rateBp: rateBp, commissionCents: commission)),
                    "expected CommissionEarned of \(commission) at \(rateBp) bp, got \(Array(rest))")
                check(rest.first?.stream == .agent(People.agent), "CommissionEarned not on the agent's stream")
                rest = rest.dropFirst()
            } else if case .commissionEarned? = rest.first {
                fail("CommissionEarned for a commission that rounds to 0: \(Array(rest))")
            }

            // LoanClosed exactly when nothing is left.
            if after == 0 {
                check(
                    Array(rest) == [.loanClosed(LoanClosed(loanId: loanId, closedOn: paidOn, paymentId: paymentId))],
                    "expected LoanClosed on \(paidOn), got \(Array(rest))")
                check(principalAllocated == principal, "closed with principal allocated \(principalAllocated) of \(principal)")
                closed = true
            } else {
                check(rest.isEmpty, "unexpected events after the payment: \(Array(rest))")
            }
            outstanding = after
            lastPaidOn = paidOn
        }
        guard !failed else { return }

        if closed {
            coverage.closed = 1
            paymentContext = "a payment after closing"
            let later = paidOn.adding(days: rng.int(0...30))
            if later > s.today { s.advance(days: s.today.days(until: later)) }
            let decision = s.decide(
                .receivePayment(
                    ReceivePayment(paymentId: "P-after", loanId: loanId, amountCents: rng.int64(1...1_000), paidOn: later)),
                actor: rng.chance(50) ? People.agent : People.admin)
            check(
                decision.refusal?.code == .rejected && decision.refusal?.reason == "LOAN_NOT_ACTIVE",
                "a payment after closing was not refused LOAN_NOT_ACTIVE: \(decision)")
        }
    }

    /// A setup command that must be accepted; its events.
    @discardableResult
    mutating func setUp(_ command: Command, actor: String = People.admin) -> [StrataEvent]? {
        let decision = s.when(command, actor: actor)
        if let refusal = decision.refusal { fail("setup \(command.type) refused: \(refusal)") }
        return decision.events
    }
}

// MARK: - Tests

@Suite("Money conservation property")
struct MoneyConservationPropertyTests {
    /// 10 batches × 30 loans = 300 loans; the batches run in parallel.
    private static let batches = 0..<10
    private static let loansPerBatch = 30

    @Test(arguments: batches)
    func paymentsConserveMoney(batch: Int) {
        var coverage = ConservationCoverage()
        for index in 0..<Self.loansPerBatch {
            let loanIndex = batch * Self.loansPerBatch + index
            var run = ConservationRun(seed: 0x5EED_0000 &+ UInt64(loanIndex) &* 7_919)
            run.run(loanIndex: loanIndex)
            coverage.add(run.coverage)
        }
        // Each batch exercises what the property is about.
        #expect(coverage.loans == Self.loansPerBatch)
        #expect(coverage.closed > 0, "\(coverage)")
        #expect(coverage.penaltyAccrued > 0, "\(coverage)")
        #expect(coverage.refusedAsTooMuch > 0, "\(coverage)")
        #expect(coverage.commissions > 0, "\(coverage)")
        #expect(coverage.frequencies == Set(LoanFrequency.allCases), "\(coverage)")
        #expect(coverage.methods == Set(InterestMethod.allCases), "\(coverage)")
        for type in PaymentType.allCases {
            #expect(coverage.types[type, default: 0] > 0, "no \(type.rawValue) payment: \(coverage)")
        }
    }
}
