import Domain
import Events
import Foundation
import StrataCore
import StrataTesting
import Testing

// DOMAIN.md, Loans, "Schedule":
// - d = 7 / 15 / 30 (WEEKLY / BI_MONTHLY / MONTHLY); n = ceil(tenureMonths × 30 / d);
//   r = monthlyRateBp / 10000 × d / 30.
// - REDUCING: A = P·r·(1+r)ⁿ / ((1+r)ⁿ − 1) in Double, rounded; interest = round(balance ×
//   monthlyRateBp × d / 300000) exactly; principal = A − interest; the last installment
//   takes the whole remaining balance with its own interest.
// - FLAT: I = round(P × monthlyRateBp × tenureMonths / 10000); I ÷ n and P ÷ n rounded
//   down, the last installment takes both remainders.
// - due date i = approvedOn + i × d; remainingBalance = principal still owed after it.

/// One schedule entry, every field spelled out: number, due date, principal, interest,
/// total, remaining balance.
private func row(
    _ number: Int, _ dueDate: String, _ principal: Int64, _ interest: Int64, _ total: Int64, _ remaining: Int64
) -> ScheduleEntry {
    ScheduleEntry(
        number: number, dueDate: LocalDate(dueDate)!, principalCents: principal, interestCents: interest,
        totalCents: total, remainingBalanceCents: remaining)
}

private func schedule(
    _ principal: Int64, _ rateBp: Int, _ tenure: Int, _ frequency: LoanFrequency, _ method: InterestMethod,
    _ approvedOn: String
) -> [ScheduleEntry] {
    AmortizationSchedule.schedule(
        principalCents: principal, monthlyRateBp: rateBp, tenureMonths: tenure, frequency: frequency, method: method,
        approvedOn: LocalDate(approvedOn)!)
}

/// Compares entry by entry, so a failure names the installment.
private func expectSchedule(
    _ actual: [ScheduleEntry], _ expected: [ScheduleEntry], sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(actual.count == expected.count, sourceLocation: sourceLocation)
    for (a, e) in zip(actual, expected) {
        #expect(a == e, "installment \(e.number)", sourceLocation: sourceLocation)
    }
}

/// An exact rational rounded half away from zero, written independently of `Money`:
/// round(n / d) = ⌊(2|n| + d) / 2d⌋ with n's sign, for d > 0.
private func roundedRatio(_ numerator: Int128, _ denominator: Int128) -> Int64 {
    let magnitude = (2 * numerator.magnitude + denominator.magnitude) / (2 * denominator.magnitude)
    return numerator < 0 ? -Int64(magnitude) : Int64(magnitude)
}

@Suite("Amortization schedule")
struct AmortizationScheduleTests {
    // MARK: - Installment count

    @Test func installmentCountForEveryFrequencyAndTenure() {
        // WEEKLY: ceil(60/7 = 8.57) = 9, ceil(90/7 = 12.86) = 13, 120/7 = 17.14 → 18,
        // 150/7 = 21.43 → 22, 180/7 = 25.71 → 26, 210/7 = 30 exactly, 240/7 = 34.29 → 35,
        // 270/7 = 38.57 → 39, 300/7 = 42.86 → 43, 330/7 = 47.14 → 48, 360/7 = 51.43 → 52.
        let weekly = [9, 13, 18, 22, 26, 30, 35, 39, 43, 48, 52]
        // BI_MONTHLY: 30t/15 = 2t exactly; MONTHLY: 30t/30 = t.
        let biMonthly = [4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]
        let monthly = [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
        for (index, tenure) in (2...12).enumerated() {
            #expect(AmortizationSchedule.installmentCount(tenureMonths: tenure, frequency: .weekly) == weekly[index], "\(tenure) months")
            #expect(
                AmortizationSchedule.installmentCount(tenureMonths: tenure, frequency: .biMonthly) == biMonthly[index],
                "\(tenure) months")
            #expect(AmortizationSchedule.installmentCount(tenureMonths: tenure, frequency: .monthly) == monthly[index], "\(tenure) months")
        }
        #expect(AmortizationSchedule.installmentCount(tenureMonths: 12, frequency: .weekly) == 52)
    }

    // MARK: - Hand-worked tables

    // MONTHLY REDUCING, the sample loan (CatalogTests' sampleSchedule): P = 1,000,000,
    // 400 bp, 3 months, approved 2026-11-20. d = 30, n = 3, r = 0.04.
    //   (1.04)³ = 1.124864; A = 1,000,000 × 0.04 × 1.124864 / 0.124864
    //     = 44,994.56 / 0.124864 = 360,348.539… → 360,349.
    //   1: interest = 1,000,000 × 400 × 30 / 300,000 = 40,000; principal 320,349; left 679,651.
    //   2: interest = 679,651 × 0.04 = 27,186.04 → 27,186; principal 333,163; left 346,488.
    //   3 (last): interest = 346,488 × 0.04 = 13,859.52 → 13,860; principal 346,488;
    //      total 360,348. Interest 81,046 in all.
    @Test func monthlyReducingSample() {
        expectSchedule(
            schedule(1_000_000, 400, 3, .monthly, .reducing, "2026-11-20"),
            [
                row(1, "2026-12-20", 320_349, 40_000, 360_349, 679_651),
                row(2, "2027-01-19", 333_163, 27_186, 360_349, 346_488),
                row(3, "2027-02-18", 346_488, 13_860, 360_348, 0),
            ])
        #expect(
            AmortizationSchedule.equatedInstallment(
                principalCents: 1_000_000, monthlyRateBp: 400, frequency: .monthly, installments: 3) == 360_349)
    }

    // MONTHLY REDUCING with an exact half cent of interest: P = 1,000,125, 440 bp, 2 months,
    // approved 2027-01-31. d = 30, n = 2, r = 0.044.
    //   (1.044)² = 1.089936; A = 1,000,125 × 0.044 × 1.089936 / 0.089936 = 533,303.445… → 533,303.
    //   1: interest = 1,000,125 × 440 / 10,000 = 44,005.5 → 44,006 (half away from zero);
    //      principal 533,303 − 44,006 = 489,297; left 510,828.
    //   2 (last): interest = 510,828 × 0.044 = 22,476.432 → 22,476; principal 510,828;
    //      total 533,304.
    @Test func monthlyReducingWithAHalfCentOfInterest() {
        expectSchedule(
            schedule(1_000_125, 440, 2, .monthly, .reducing, "2027-01-31"),
            [
                row(1, "2027-03-02", 489_297, 44_006, 533_303, 510_828),
                row(2, "2027-04-01", 510_828, 22_476, 533_304, 0),
            ])
    }

    // MONTHLY FLAT: P = 1,234,567, 365 bp, 3 months, approved 2026-11-20. n = 3.
    //   I = 1,234,567 × 365 × 3 / 10,000 = 135,185.0865 → 135,185.
    //   interest ⌊135,185 / 3⌋ = 45,061, the last 135,185 − 2 × 45,061 = 45,063;
    //   principal ⌊1,234,567 / 3⌋ = 411,522, the last 1,234,567 − 2 × 411,522 = 411,523.
    @Test func monthlyFlat() {
        expectSchedule(
            schedule(1_234_567, 365, 3, .monthly, .flat, "2026-11-20"),
            [
                row(1, "2026-12-20", 411_522, 45_061, 456_583, 823_045),
                row(2, "2027-01-19", 411_522, 45_061, 456_583, 411_523),
                row(3, "2027-02-18", 411_523, 45_063, 456_586, 0),
            ])
    }

    // WEEKLY REDUCING: P = 500,000, 300 bp, 2 months, approved 2027-02-25 (due dates run
    // through the end of a non-leap February). d = 7, n = ceil(60 / 7) = 9,
    // r = 0.03 × 7 / 30 = 0.007.
    //   (1.007)⁹ = 1.064793116…; A = 500,000 × 0.007 × 1.064793116 / 0.064793116
    //     = 57,518.0837… → 57,518.
    //   interest_i = round(balance × 300 × 7 / 300,000) = round(balance × 0.007):
    //   1: 500,000 → 3,500;          principal 54,018; left 445,982
    //   2: 445,982 → 3,121.874 → 3,122; principal 54,396; left 391,586
    //   3: 391,586 → 2,741.102 → 2,741; principal 54,777; left 336,809
    //   4: 336,809 → 2,357.663 → 2,358; principal 55,160; left 281,649
    //   5: 281,649 → 1,971.543 → 1,972; principal 55,546; left 226,103
    //   6: 226,103 → 1,582.721 → 1,583; principal 55,935; left 170,168
    //   7: 170,168 → 1,191.176 → 1,191; principal 56,327; left 113,841
    //   8: 113,841 →   796.887 →   797; principal 56,721; left 57,120
    //   9 (last): 57,120 → 399.84 → 400; principal 57,120; total 57,520. Interest 17,664.
    @Test func weeklyReducing() {
        expectSchedule(
            schedule(500_000, 300, 2, .weekly, .reducing, "2027-02-25"),
            [
                row(1, "2027-03-04", 54_018, 3_500, 57_518, 445_982),
                row(2, "2027-03-11", 54_396, 3_122, 57_518, 391_586),
                row(3, "2027-03-18", 54_777, 2_741, 57_518, 336_809),
                row(4, "2027-03-25", 55_160, 2_358, 57_518, 281_649),
                row(5, "2027-04-01", 55_546, 1_972, 57_518, 226_103),
                row(6, "2027-04-08", 55_935, 1_583, 57_518, 170_168),
                row(7, "2027-04-15", 56_327, 1_191, 57_518, 113_841),
                row(8, "2027-04-22", 56_721, 797, 57_518, 57_120),
                row(9, "2027-04-29", 57_120, 400, 57_520, 0),
            ])
    }

    // WEEKLY FLAT: P = 777,777, 450 bp, 2 months, approved 2026-12-28 (across a year end).
    // n = 9.
    //   I = 777,777 × 450 × 2 / 10,000 = 69,999.93 → 70,000.
    //   interest ⌊70,000 / 9⌋ = 7,777, the last 70,000 − 8 × 7,777 = 7,784;
    //   principal ⌊777,777 / 9⌋ = 86,419, the last 777,777 − 8 × 86,419 = 86,425.
    @Test func weeklyFlat() {
        expectSchedule(
            schedule(777_777, 450, 2, .weekly, .flat, "2026-12-28"),
            [
                row(1, "2027-01-04", 86_419, 7_777, 94_196, 691_358),
                row(2, "2027-01-11", 86_419, 7_777, 94_196, 604_939),
                row(3, "2027-01-18", 86_419, 7_777, 94_196, 518_520),
                row(4, "2027-01-25", 86_419, 7_777, 94_196, 432_101),
                row(5, "2027-02-01", 86_419, 7_777, 94_196, 345_682),
                row(6, "2027-02-08", 86_419, 7_777, 94_196, 259_263),
                row(7, "2027-02-15", 86_419, 7_777, 94_196, 172_844),
                row(8, "2027-02-22", 86_419, 7_777, 94_196, 86_425),
                row(9, "2027-03-01", 86_425, 7_784, 94_209, 0),
            ])
    }

    // BI_MONTHLY REDUCING: P = 1,000,000, 500 bp, 2 months, approved 2028-02-10 (a leap
    // February). d = 15, n = 4, r = 0.05 × 15 / 30 = 0.025.
    //   (1.025)⁴ = 1.103812890625; A = 1,000,000 × 0.025 × 1.103812890625 / 0.103812890625
    //     = 265,817.877… → 265,818.
    //   interest_i = round(balance × 500 × 15 / 300,000) = round(balance / 40):
    //   1: 1,000,000 → 25,000;          principal 240,818; left 759,182
    //   2:   759,182 → 18,979.55 → 18,980; principal 246,838; left 512,344
    //   3:   512,344 → 12,808.6 → 12,809;  principal 253,009; left 259,335
    //   4 (last): 259,335 → 6,483.375 → 6,483; principal 259,335; total 265,818.
    @Test func biMonthlyReducing() {
        expectSchedule(
            schedule(1_000_000, 500, 2, .biMonthly, .reducing, "2028-02-10"),
            [
                row(1, "2028-02-25", 240_818, 25_000, 265_818, 759_182),
                row(2, "2028-03-11", 246_838, 18_980, 265_818, 512_344),
                row(3, "2028-03-26", 253_009, 12_809, 265_818, 259_335),
                row(4, "2028-04-10", 259_335, 6_483, 265_818, 0),
            ])
    }

    // BI_MONTHLY FLAT with a half cent of total interest: P = 1,000,005, 500 bp, 2 months,
    // approved 2026-11-20. n = 4.
    //   I = 1,000,005 × 500 × 2 / 10,000 = 100,000.5 → 100,001 (half away from zero).
    //   interest ⌊100,001 / 4⌋ = 25,000, the last 100,001 − 3 × 25,000 = 25,001;
    //   principal ⌊1,000,005 / 4⌋ = 250,001, the last 1,000,005 − 3 × 250,001 = 250,002.
    @Test func biMonthlyFlat() {
        expectSchedule(
            schedule(1_000_005, 500, 2, .biMonthly, .flat, "2026-11-20"),
            [
                row(1, "2026-12-05", 250_001, 25_000, 275_001, 750_004),
                row(2, "2026-12-20", 250_001, 25_000, 275_001, 500_003),
                row(3, "2027-01-04", 250_001, 25_000, 275_001, 250_002),
                row(4, "2027-01-19", 250_002, 25_001, 275_003, 0),
            ])
    }

    @Test func equatedInstallmentsOfTheTables() {
        #expect(
            AmortizationSchedule.equatedInstallment(
                principalCents: 500_000, monthlyRateBp: 300, frequency: .weekly, installments: 9) == 57_518)
        #expect(
            AmortizationSchedule.equatedInstallment(
                principalCents: 1_000_000, monthlyRateBp: 500, frequency: .biMonthly, installments: 4) == 265_818)
        #expect(
            AmortizationSchedule.equatedInstallment(
                principalCents: 1_000_125, monthlyRateBp: 440, frequency: .monthly, installments: 2) == 533_303)
    }

    // The EMI is computed in Double (DOMAIN.md), and here that matters: P = 17,502,490,
    // 500 bp, 2 months MONTHLY, approved 2026-11-20. r = 0.05, (1.05)² = 1.1025.
    //   Exactly, A = 17,502,490 × 0.05 × 1.1025 / 0.1025 = 17,502,490 × 441 / 820
    //     = 9,412,924.5, which would round to 9,412,925; in Double the same formula gives
    //     9,412,924.499999996, which rounds to 9,412,924. The rule says Double: 9,412,924.
    //   1: interest = 17,502,490 × 500 / 10,000 = 875,124.5 → 875,125 (half away from zero);
    //      principal 9,412,924 − 875,125 = 8,537,799; left 8,964,691.
    //   2 (last): interest = 8,964,691 × 0.05 = 448,234.55 → 448,235; principal 8,964,691;
    //      total 9,412,926.
    @Test func emiRoundsTheDoubleNotTheExactRatio() {
        #expect(
            AmortizationSchedule.equatedInstallment(
                principalCents: 17_502_490, monthlyRateBp: 500, frequency: .monthly, installments: 2) == 9_412_924)
        expectSchedule(
            schedule(17_502_490, 500, 2, .monthly, .reducing, "2026-11-20"),
            [
                row(1, "2026-12-20", 8_537_799, 875_125, 9_412_924, 8_964_691),
                row(2, "2027-01-19", 8_964_691, 448_235, 9_412_926, 0),
            ])
    }

    // A two-cent loan over 4 months at 300 bp: A = 2 × 0.03 × 1.03⁴ / (1.03⁴ − 1) = 0.538 → 1,
    // and every interest rounds to 0. Read literally, DOMAIN.md's "principal = A − interest"
    // would pay 1, 1, 1 and leave the last installment −1 (remaining balances 1, 0, −1, 0).
    // The calculator keeps each principal within what is still owed instead: 1, 1, 0, 0.
    // (Reported as a gap in DOMAIN.md: the literal rule overshoots the balance for loans of
    // up to 1,430 cents, e.g. 1,340 cents weekly over 12 months at 500 bp, and 1,430 at 434 bp:
    // its installment 51 would pay 36 of the 35 left and the last −1.)
    @Test func tinyPrincipalNeverOvershootsTheBalance() {
        expectSchedule(
            schedule(2, 300, 4, .monthly, .reducing, "2026-11-20"),
            [
                row(1, "2026-12-20", 1, 0, 1, 1),
                row(2, "2027-01-19", 1, 0, 1, 0),
                row(3, "2027-02-18", 0, 0, 0, 0),
                row(4, "2027-03-20", 0, 0, 0, 0),
            ])
        let weekly = schedule(1_340, 500, 12, .weekly, .reducing, "2026-11-20")
        #expect(weekly.allSatisfy { $0.principalCents >= 0 && $0.remainingBalanceCents >= 0 })
        #expect(weekly.reduce(0) { $0 + $1.principalCents } == 1_340)
        let largest = schedule(1_430, 434, 12, .weekly, .reducing, "2026-11-20")
        #expect(largest.allSatisfy { $0.principalCents >= 0 && $0.remainingBalanceCents >= 0 })
        #expect(largest.suffix(2).map(\.principalCents) == [35, 0])
        #expect(largest.reduce(0) { $0 + $1.principalCents } == 1_430)
    }

    // MARK: - Invariants

    @Test(arguments: InterestMethod.allCases, LoanFrequency.allCases)
    func invariantsOverManyLoans(method: InterestMethod, frequency: LoanFrequency) {
        let principals: [Int64] = [
            1, 2, 3, 7, 52, 99, 100, 1_000, 1_341, 5_000, 12_345, 99_999, 100_000, 999_999, 1_000_000, 7_654_321,
            54_321_987, 99_999_999, 100_000_000,
        ]
        let approvedOn = date("2027-12-30")
        let d = frequency.periodDays
        for principal in principals {
            for rate in [300, 333, 401, 457, 500] {
                for tenure in 2...12 {
                    let label = "\(principal) at \(rate) bp over \(tenure) months"
                    let entries = AmortizationSchedule.schedule(
                        principalCents: principal, monthlyRateBp: rate, tenureMonths: tenure, frequency: frequency,
                        method: method, approvedOn: approvedOn)
                    let n = (tenure * 30 + d - 1) / d
                    #expect(entries.count == n, "\(label)")
                    #expect(entries.map(\.number) == Array(1...n), "\(label)")
                    #expect(entries.reduce(0) { $0 + $1.principalCents } == principal, "\(label)")
                    #expect(entries.last?.remainingBalanceCents == 0, "\(label)")

                    var owed = principal
                    for entry in entries {
                        let interest = roundedRatio(Int128(owed) * Int128(rate) * Int128(d), 300_000)
                        #expect(entry.dueDate == approvedOn.adding(days: entry.number * d), "\(label) #\(entry.number)")
                        #expect(entry.totalCents == entry.principalCents + entry.interestCents, "\(label) #\(entry.number)")
                        #expect(entry.principalCents >= 0 && entry.interestCents >= 0, "\(label) #\(entry.number)")
                        #expect(entry.remainingBalanceCents == owed - entry.principalCents, "\(label) #\(entry.number)")
                        #expect(entry.remainingBalanceCents <= owed, "\(label) #\(entry.number)")
                        if principal >= 100_000 {
                            #expect(entry.remainingBalanceCents < owed, "\(label) #\(entry.number)")
                        }
                        if method == .reducing {
                            #expect(entry.interestCents == interest, "\(label) #\(entry.number)")
                        }
                        owed = entry.remainingBalanceCents
                    }

                    switch method {
                    case .reducing:
                        // Every installment but the last is the EMI, for loans large enough
                        // that no principal part is held back by the balance.
                        if principal >= 100_000 {
                            let emi = AmortizationSchedule.equatedInstallment(
                                principalCents: principal, monthlyRateBp: rate, frequency: frequency, installments: n)
                            #expect(entries.dropLast().allSatisfy { $0.totalCents == emi }, "\(label)")
                        }
                    case .flat:
                        let totalInterest = roundedRatio(Int128(principal) * Int128(rate) * Int128(tenure), 10_000)
                        #expect(entries.reduce(0) { $0 + $1.interestCents } == totalInterest, "\(label)")
                        #expect(entries.dropLast().allSatisfy { $0.interestCents == totalInterest / Int64(n) }, "\(label)")
                        #expect(entries.dropLast().allSatisfy { $0.principalCents == principal / Int64(n) }, "\(label)")
                    }
                }
            }
        }
    }

    // MARK: - Independent computation

    /// 300 pseudo-random valid loans, computed again by Tests/IndependentChecks/schedules.py
    /// (Python, standard library only: Fractions for the exact formulas, a float power for
    /// the EMI), must give exactly the Swift schedules.
    @Test func pythonComputesTheSameSchedules() throws {
        var random = SplitMix64(seed: 0x5354_5241_5441_0001)
        var loans: [LoanSpec] = []
        let firstDay = date("2024-01-01")
        for index in 0..<300 {
            loans.append(
                LoanSpec(
                    principalCents: random.next(in: 1...100_000_000),
                    monthlyRateBp: Int(random.next(in: 300...500)),
                    tenureMonths: Int(random.next(in: 2...12)),
                    frequency: LoanFrequency.allCases[index % 3],
                    interestMethod: InterestMethod.allCases[(index / 3) % 2],
                    approvedOn: firstDay.adding(days: Int(random.next(in: 0...(365 * 6))))))
        }
        // The edges of the valid ranges (across a leap day)…
        let edges: [(Int64, Int, Int)] = [(100_000_000, 500, 12), (100_000_000, 300, 2), (2_000, 300, 12)]
        for frequency in LoanFrequency.allCases {
            for method in InterestMethod.allCases {
                for (principal, rate, tenure) in edges {
                    loans.append(
                        LoanSpec(
                            principalCents: principal, monthlyRateBp: rate, tenureMonths: tenure, frequency: frequency,
                            interestMethod: method, approvedOn: date("2028-02-28")))
                }
            }
        }
        // …and the hand-worked tables above.
        let tables: [(Int64, Int, Int, LoanFrequency, InterestMethod, String)] = [
            (1_000_000, 400, 3, .monthly, .reducing, "2026-11-20"),
            (1_000_125, 440, 2, .monthly, .reducing, "2027-01-31"),
            (1_234_567, 365, 3, .monthly, .flat, "2026-11-20"),
            (500_000, 300, 2, .weekly, .reducing, "2027-02-25"),
            (777_777, 450, 2, .weekly, .flat, "2026-12-28"),
            (1_000_000, 500, 2, .biMonthly, .reducing, "2028-02-10"),
            (1_000_005, 500, 2, .biMonthly, .flat, "2026-11-20"),
            (17_502_490, 500, 2, .monthly, .reducing, "2026-11-20"),
            // Loans of a few cents, where A − interest is kept within 0…balance (docs/domain.md).
            (2, 300, 4, .monthly, .reducing, "2026-11-20"),
            (1_430, 434, 12, .weekly, .reducing, "2026-11-20"),
            (151, 396, 7, .weekly, .reducing, "2026-08-03"),
        ]
        for (principal, rate, tenure, frequency, method, approvedOn) in tables {
            loans.append(
                LoanSpec(
                    principalCents: principal, monthlyRateBp: rate, tenureMonths: tenure, frequency: frequency,
                    interestMethod: method, approvedOn: date(approvedOn)))
        }

        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("IndependentChecks").appendingPathComponent("schedules.py")
        try #require(FileManager.default.fileExists(atPath: script.path), "missing \(script.path)")
        let input = String(decoding: try JSONEncoder().encode(loans), as: UTF8.self)
        let result = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path], stdin: input)
        try #require(result.exitCode == 0, "python3 failed: \(result.stderr)")
        let python = try JSONDecoder().decode([[ScheduleEntry]].self, from: Data(result.stdout.utf8))
        try #require(python.count == loans.count)

        var mismatches = 0
        for (loan, expected) in zip(loans, python) {
            let actual = AmortizationSchedule.schedule(
                principalCents: loan.principalCents, monthlyRateBp: loan.monthlyRateBp, tenureMonths: loan.tenureMonths,
                frequency: loan.frequency, method: loan.interestMethod, approvedOn: loan.approvedOn)
            if actual != expected {
                mismatches += 1
                let firstDifference = zip(actual, expected).first { $0 != $1 }
                Issue.record(
                    "\(loan): Swift and Python differ; first differing installment Swift \(String(describing: firstDifference?.0)) Python \(String(describing: firstDifference?.1)); counts \(actual.count) / \(expected.count)"
                )
            }
        }
        #expect(mismatches == 0)
    }
}

/// A loan as Tests/IndependentChecks/schedules.py reads it.
private struct LoanSpec: Codable {
    var principalCents: Int64
    var monthlyRateBp: Int
    var tenureMonths: Int
    var frequency: LoanFrequency
    var interestMethod: InterestMethod
    var approvedOn: LocalDate
}

extension SplitMix64 {
    /// A value in `range` (the tiny modulo bias does not matter here).
    fileprivate mutating func next(in range: ClosedRange<Int64>) -> Int64 {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int64(next() % width)
    }
}
