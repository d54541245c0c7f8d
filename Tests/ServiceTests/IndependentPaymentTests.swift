import Foundation
import StrataCore
import StrataTesting
import Testing

/// The money Strata decides, judged from outside Swift: Tests/IndependentChecks/payment_workload.py
/// (standard library only, written from DOMAIN.md) sends a randomized month of loans, payments,
/// commission rate changes and invoices through `strata send` to a real service, then
/// payments.py recomputes from the store every payment's penalty, allocation, type and what
/// is still owed, every commission at the rate then in force, every closing, every invoice's
/// lines, totals and number and every invoice payment, and each reply is compared with what
/// the rules expect (overpayments refused).
@Suite struct IndependentPaymentTests {
    @Test func aHistoryRecomputedFromTheRulesAgreesWithEveryDecision() throws {
        // The script dates everything by its UTC today, which must be the service's throughout.
        waitUnlessTheUTCDayLasts(seconds: 60)
        let data = try ChildProcess.temporaryDirectory("strata-payments")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let script = DocumentedClientTests.repository.appendingPathComponent(
            "Tests/IndependentChecks/payment_workload.py")

        let run = try ChildProcess.run(
            DocumentedClientTests.python(),
            [script.path, "--seed", "20261123", "--loans", "120", "--invoices", "60"],
            environment: [
                "STRATA_DATA": data.path, "STRATA_COMMANDS": service.commands,
                "STRATA_BIN": ChildProcess.product("strata").path, "STRATA_KEY": ServiceProcess.Keys.service,
            ],
            deadline: 120)
        #expect(service.stop() == 0)
        #expect(run.exitCode == 0, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        let summary = try JSONParser.parse(Array((lines.last ?? "").utf8))
        #expect(summary["mismatches"]?.integerValue == 0)
        // The history pressed on every rule: enough of each decision, every payment type, overpayments.
        for (name, least) in [
            ("payments", 200), ("commissions", 100), ("paymentsAccruingPenalty", 50), ("loansClosed", 20),
            ("invoices", 50), ("invoiceLines", 200), ("invoicePayments", 30), ("refused", 20),
        ] {
            #expect((summary[name]?.integerValue ?? 0) >= least, "\(name): \(lines.last ?? "")")
        }
        for type in ["FULL", "PARTIAL", "PENALTY", "REGULAR"] {
            #expect((summary["paymentTypes"]?[type]?.integerValue ?? 0) > 0, "no \(type) payment")
        }
    }
}
