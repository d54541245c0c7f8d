import EventStore
import Foundation
import Projections
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

@testable import StrataCLI

/// A named query with its filters, and exactly the rows it must answer on `KnownHistory`.
struct QueryCase: CustomTestStringConvertible, Sendable {
    let arguments: [String]
    let rows: String

    init(_ arguments: [String], _ rows: String) {
        self.arguments = arguments
        self.rows = rows
    }

    var testDescription: String { arguments.joined(separator: " ") }

    /// What the answer says it was read from.
    var source: String {
        ["audit": "audit", "refusals": "the journal of events.db"][arguments[0]] ?? "readmodels"
    }
}

/// Every named query, with filters, on the known history. The figures are the domain's:
/// L1's schedule is 9,610.46 + 1,200.00 interest first (EMI 10,810.46, total 32,431.37);
/// the commission is 10% of the interest paid; INV1 is 1,000.00 + 18% = 1,180.00, 500.00 paid.
let queryCases: [QueryCase] = [
    QueryCase(
        ["accounts"],
        #"""
        [{"account_id":"A1","active_loans":1,"agent_id":"agent-1","email":null,"loans_count":1,"name":"Lakshmi Iyer","opened_at":"2026-01-02T10:00:00.000Z","phone":"+919845012345","status":"ACTIVE"},
         {"account_id":"A2","active_loans":0,"agent_id":"agent-1","email":"arjun@example.com","loans_count":1,"name":"Das, Arjun","opened_at":"2026-01-02T10:05:00.000Z","phone":"+919845012346","status":"ACTIVE"},
         {"account_id":"A3","active_loans":1,"agent_id":"agent-2","email":null,"loans_count":1,"name":"Priya \"PN\" Nair","opened_at":"2026-01-02T10:10:00.000Z","phone":"+919845012347","status":"ACTIVE"}]
        """#),
    QueryCase(
        ["accounts", "--search", "ARJUN"],
        #"""
        [{"account_id":"A2","active_loans":0,"agent_id":"agent-1","email":"arjun@example.com","loans_count":1,"name":"Das, Arjun","opened_at":"2026-01-02T10:05:00.000Z","phone":"+919845012346","status":"ACTIVE"}]
        """#),
    QueryCase(["accounts", "--search", "%"], "[]"),
    QueryCase(
        ["accounts", "--search", "012347", "--agent", "agent-2", "--status", "active"],
        #"""
        [{"account_id":"A3","active_loans":1,"agent_id":"agent-2","email":null,"loans_count":1,"name":"Priya \"PN\" Nair","opened_at":"2026-01-02T10:10:00.000Z","phone":"+919845012347","status":"ACTIVE"}]
        """#),
    QueryCase(
        ["portfolio", "--agent", "agent-1", "--date", "2026-03-20"],
        #"""
        [{"account_id":"A1","agent_id":"agent-1","approved_on":"2026-01-05","closed_on":null,"days_overdue":14,"frequency":"MONTHLY","interest_method":"REDUCING","loan_id":"L1","monthly_rate_bp":400,"next_due_date":"2026-03-06","outstanding_cents":2162091,"principal_cents":3000000,"requested_on":"2026-01-05","status":"ACTIVE","tenure_months":3,"total_due_cents":3243137,"total_paid_cents":1081046},
         {"account_id":"A2","agent_id":"agent-1","approved_on":null,"closed_on":null,"days_overdue":0,"frequency":"MONTHLY","interest_method":"REDUCING","loan_id":"L3","monthly_rate_bp":350,"next_due_date":null,"outstanding_cents":0,"principal_cents":500000,"requested_on":"2026-02-20","status":"PENDING_APPROVAL","tenure_months":2,"total_due_cents":0,"total_paid_cents":0}]
        """#),
    QueryCase(
        ["portfolio", "--status", "active", "--since", "2026-02-01", "--until", "2026-02-28", "--date", "2026-03-12"],
        #"""
        [{"account_id":"A3","agent_id":"agent-2","approved_on":"2026-02-10","closed_on":null,"days_overdue":0,"frequency":"MONTHLY","interest_method":"REDUCING","loan_id":"L2","monthly_rate_bp":300,"next_due_date":"2026-03-12","outstanding_cents":1254266,"principal_cents":1200000,"requested_on":"2026-02-10","status":"ACTIVE","tenure_months":2,"total_due_cents":1254266,"total_paid_cents":0}]
        """#),
    QueryCase(
        ["installments", "--loan", "L1"],
        #"""
        [{"due_date":"2026-02-04","interest_cents":120000,"interest_paid_cents":120000,"loan_id":"L1","number":1,"paid_on":"2026-02-04","penalty_accrued_cents":0,"penalty_paid_cents":0,"principal_cents":961046,"principal_paid_cents":961046,"status":"PAID","total_cents":1081046},
         {"due_date":"2026-03-06","interest_cents":81558,"interest_paid_cents":0,"loan_id":"L1","number":2,"paid_on":null,"penalty_accrued_cents":0,"penalty_paid_cents":0,"principal_cents":999488,"principal_paid_cents":0,"status":"UNPAID","total_cents":1081046},
         {"due_date":"2026-04-05","interest_cents":41579,"interest_paid_cents":0,"loan_id":"L1","number":3,"paid_on":null,"penalty_accrued_cents":0,"penalty_paid_cents":0,"principal_cents":1039466,"principal_paid_cents":0,"status":"UNPAID","total_cents":1081045}]
        """#),
    QueryCase(
        ["installments", "--status", "unpaid", "--since", "2026-04-01"],
        #"""
        [{"due_date":"2026-04-05","interest_cents":41579,"interest_paid_cents":0,"loan_id":"L1","number":3,"paid_on":null,"penalty_accrued_cents":0,"penalty_paid_cents":0,"principal_cents":1039466,"principal_paid_cents":0,"status":"UNPAID","total_cents":1081045},
         {"due_date":"2026-04-11","interest_cents":18266,"interest_paid_cents":0,"loan_id":"L2","number":2,"paid_on":null,"penalty_accrued_cents":0,"penalty_paid_cents":0,"principal_cents":608867,"principal_paid_cents":0,"status":"UNPAID","total_cents":627133}]
        """#),
    QueryCase(
        ["payments", "--agent", "agent-1", "--since", "2026-02-04", "--until", "2026-02-04"],
        #"""
        [{"agent_id":"agent-1","amount_cents":1081046,"interest_cents":120000,"loan_id":"L1","method":"CASH","outstanding_after_cents":2162091,"paid_on":"2026-02-04","payment_id":"P1","penalty_cents":0,"principal_cents":961046,"received_by":"agent-1","type":"REGULAR"}]
        """#),
    QueryCase(["payments", "--loan", "L2"], "[]"),
    QueryCase(
        ["overdue", "--date", "2026-03-20"],
        #"""
        [{"account_id":"A1","agent_id":"agent-1","bucket":"1-30","days_overdue":14,"loan_id":"L1","oldest_due_date":"2026-03-06","outstanding_cents":2162091,"overdue_cents":1081046},
         {"account_id":"A3","agent_id":"agent-2","bucket":"1-30","days_overdue":8,"loan_id":"L2","oldest_due_date":"2026-03-12","outstanding_cents":1254266,"overdue_cents":627133}]
        """#),
    QueryCase(
        ["overdue", "--date", "2026-04-10", "--bucket", "31-60", "--agent", "agent-1"],
        #"""
        [{"account_id":"A1","agent_id":"agent-1","bucket":"31-60","days_overdue":35,"loan_id":"L1","oldest_due_date":"2026-03-06","outstanding_cents":2162091,"overdue_cents":2162091}]
        """#),
    QueryCase(
        ["agents", "--status", "approved"],
        #"""
        [{"agent_id":"agent-1","cashed_out_cents":0,"collected_cents":1081046,"collectible_cents":12000,"commission_rate_bp":null,"earned_cents":12000,"loans_count":2,"loans_released":1,"loans_released_cents":3000000,"payments_count":1,"pending_cents":0,"status":"APPROVED","username":"ravi"},
         {"agent_id":"agent-2","cashed_out_cents":0,"collected_cents":0,"collectible_cents":0,"commission_rate_bp":null,"earned_cents":0,"loans_count":1,"loans_released":1,"loans_released_cents":1200000,"payments_count":0,"pending_cents":0,"status":"APPROVED","username":"meena"}]
        """#),
    QueryCase(["cashouts", "--agent", "agent-1"], "[]"),
    QueryCase(
        ["pending"],
        #"""
        [{"agent_id":"agent-3","amount_cents":null,"entity_id":"agent-3","kind":"AGENT","requested_by":"agent-3","requested_on":"2026-01-02"},
         {"agent_id":"agent-1","amount_cents":500000,"entity_id":"L3","kind":"LOAN","requested_by":"agent-1","requested_on":"2026-02-20"}]
        """#),
    QueryCase(
        ["pending", "--kind", "loan"],
        #"""
        [{"agent_id":"agent-1","amount_cents":500000,"entity_id":"L3","kind":"LOAN","requested_by":"agent-1","requested_on":"2026-02-20"}]
        """#),
    QueryCase(
        ["dashboard"],
        #"""
        [{"active_accounts":3,"active_loans":2,"approved_agents":2,"collected_cents":1081046,"collectible_cents":3416357,"loans_released":2,"pending_agents":1,"pending_approvals":2,"principal_released_cents":4200000}]
        """#),
    QueryCase(
        ["invoices", "--customer", "C1", "--status", "partially_paid"],
        #"""
        [{"balance_cents":68000,"customer_name":"Sri Ganesh Traders","due_date":"2026-02-15","invoice_id":"INV1","invoice_number":"INV-000001","issue_date":"2026-02-01","paid_cents":50000,"party_id":"C1","status":"PARTIALLY_PAID","tax_cents":18000,"taxable_cents":100000,"total_cents":118000}]
        """#),
    QueryCase(["invoices", "--since", "2026-02-02"], "[]"),
    QueryCase(
        ["receivables", "--date", "2026-03-20"],
        #"""
        [{"current_cents":0,"days_1_30_cents":0,"days_31_60_cents":68000,"days_61_90_cents":0,"name":"Sri Ganesh Traders","over_90_days_cents":0,"party_id":"C1","total_cents":68000}]
        """#),
    QueryCase(
        ["receivables", "--date", "2026-02-10", "--customer", "C1"],
        #"""
        [{"current_cents":118000,"days_1_30_cents":0,"days_31_60_cents":0,"days_61_90_cents":0,"name":"Sri Ganesh Traders","over_90_days_cents":0,"party_id":"C1","total_cents":118000}]
        """#),
    QueryCase(
        ["collections"],
        #"""
        [{"day":"2026-02-04","invoice_collected_cents":0,"invoice_payments_count":0,"loan_collected_cents":1081046,"loan_interest_cents":120000,"loan_payments_count":1,"loan_penalty_cents":0,"loan_principal_cents":961046,"total_collected_cents":1081046},
         {"day":"2026-03-01","invoice_collected_cents":50000,"invoice_payments_count":1,"loan_collected_cents":0,"loan_interest_cents":0,"loan_payments_count":0,"loan_penalty_cents":0,"loan_principal_cents":0,"total_collected_cents":50000}]
        """#),
    QueryCase(
        ["collections", "--since", "2026-02-05"],
        #"""
        [{"day":"2026-03-01","invoice_collected_cents":50000,"invoice_payments_count":1,"loan_collected_cents":0,"loan_interest_cents":0,"loan_payments_count":0,"loan_penalty_cents":0,"loan_principal_cents":0,"total_collected_cents":50000}]
        """#),
    QueryCase(
        ["collections-by-agent", "--agent", "agent-1"],
        #"""
        [{"agent_id":"agent-1","collected_cents":1081046,"day":"2026-02-04","payments_count":1}]
        """#),
    QueryCase(
        ["users", "--role", "agent", "--status", "pending"],
        #"""
        [{"decided_at":null,"decided_by":null,"registered_at":"2026-01-02T09:04:00.000Z","role":"AGENT","status":"PENDING","user_id":"agent-3","username":"kiran"}]
        """#),
    QueryCase(
        ["notifications", "--user", "agent-2"],
        #"""
        [{"created_at":"2026-01-02T09:03:00.000Z","entity_id":"agent-2","kind":"AGENT_APPROVED","message":"Your agent registration was approved by admin-1.","position":5,"user_id":"agent-2"},
         {"created_at":"2026-01-02T10:10:00.000Z","entity_id":"A3","kind":"ACCOUNT_CREATED","message":"Account A3 was opened by agent-2 and assigned to you.","position":9,"user_id":"agent-2"},
         {"created_at":"2026-02-10T10:00:00.000Z","entity_id":"L2","kind":"LOAN_APPROVED","message":"Loan L2 on account A3 was approved by admin-1 on 2026-02-10: 12,000.00 released, 2 installments, the first due 2026-03-12.","position":17,"user_id":"agent-2"}]
        """#),
    QueryCase(
        ["audit", "--actor", "admin-1", "--type", "LoanApproved"],
        #"""
        [{"action":"APPROVE_LOAN","actor":"admin-1","command_id":"approve-L1","entity":"loan-L1","event_type":"LoanApproved","position":11,"recorded_at":"2026-01-05T11:00:00.000Z","summary":"admin-1 approved loan L1 on 2026-01-05: 3 installments of 10,810.46 (last 10,810.45) due 2026-02-04 to 2026-04-05, total 32,431.37"},
         {"action":"APPROVE_LOAN","actor":"admin-1","command_id":"approve-L2","entity":"loan-L2","event_type":"LoanApproved","position":17,"recorded_at":"2026-02-10T10:00:00.000Z","summary":"admin-1 approved loan L2 on 2026-02-10: 2 installments of 6,271.33 due 2026-03-12 to 2026-04-11, total 12,542.66"}]
        """#),
    // An action is a code and an event type a catalogue's name: either may be typed in any case.
    QueryCase(
        ["audit", "--action", "approve_loan", "--type", "loanapproved"],
        #"""
        [{"action":"APPROVE_LOAN","actor":"admin-1","command_id":"approve-L1","entity":"loan-L1","event_type":"LoanApproved","position":11,"recorded_at":"2026-01-05T11:00:00.000Z","summary":"admin-1 approved loan L1 on 2026-01-05: 3 installments of 10,810.46 (last 10,810.45) due 2026-02-04 to 2026-04-05, total 32,431.37"},
         {"action":"APPROVE_LOAN","actor":"admin-1","command_id":"approve-L2","entity":"loan-L2","event_type":"LoanApproved","position":17,"recorded_at":"2026-02-10T10:00:00.000Z","summary":"admin-1 approved loan L2 on 2026-02-10: 2 installments of 6,271.33 due 2026-03-12 to 2026-04-11, total 12,542.66"}]
        """#),
    QueryCase(
        ["audit", "--since", "2026-02-04", "--until", "2026-02-04T12:00:00Z", "--entity", "agent-agent-1"],
        #"""
        [{"action":"EARN_COMMISSION","actor":"agent-1","command_id":"pay-P1","entity":"agent-agent-1","event_type":"CommissionEarned","position":15,"recorded_at":"2026-02-04T12:00:00.000Z","summary":"agent agent-1 earned 120.00 commission on payment P1 of loan L1 (1000 bp of interest 1,200.00)"}]
        """#),
    QueryCase(
        ["refusals"],
        #"""
        [{"actor":"agent-3","code":"FORBIDDEN","command_id":"open-A4","command_type":"OpenAccount","details":null,"key_id":"svc","message":"agent-3 is PENDING, not APPROVED, and may not open accounts","reason":"ACTOR_NOT_APPROVED","recorded_at":"2026-03-02T09:00:00.000Z"},
         {"actor":"agent-1","code":"REJECTED","command_id":"overpay-L1","command_type":"ReceivePayment","details":null,"key_id":"svc","message":"99999999 is more than the 2162091 owed on 2026-03-02","reason":"AMOUNT_EXCEEDS_OUTSTANDING","recorded_at":"2026-03-02T09:05:00.000Z"},
         {"actor":"agent-2","code":"INVALID","command_id":"request-L4","command_type":"RequestLoan","details":"monthlyRateBp: OUT_OF_RANGE; tenureMonths: OUT_OF_RANGE","key_id":"svc","message":"RequestLoan is invalid: monthlyRateBp: OUT_OF_RANGE; tenureMonths: OUT_OF_RANGE","reason":"OUT_OF_RANGE","recorded_at":"2026-03-02T09:10:00.000Z"},
         {"actor":"admin-1","code":"NOT_FOUND","command_id":"approve-L9","command_type":"ApproveLoan","details":null,"key_id":"svc","message":"no loan L9","reason":"LOAN_NOT_FOUND","recorded_at":"2026-03-03T10:00:00.000Z"}]
        """#),
    QueryCase(
        ["refusals", "--code", "invalid"],
        #"""
        [{"actor":"agent-2","code":"INVALID","command_id":"request-L4","command_type":"RequestLoan","details":"monthlyRateBp: OUT_OF_RANGE; tenureMonths: OUT_OF_RANGE","key_id":"svc","message":"RequestLoan is invalid: monthlyRateBp: OUT_OF_RANGE; tenureMonths: OUT_OF_RANGE","reason":"OUT_OF_RANGE","recorded_at":"2026-03-02T09:10:00.000Z"}]
        """#),
    QueryCase(
        ["refusals", "--actor", "agent-1", "--reason", "AMOUNT_EXCEEDS_OUTSTANDING"],
        #"""
        [{"actor":"agent-1","code":"REJECTED","command_id":"overpay-L1","command_type":"ReceivePayment","details":null,"key_id":"svc","message":"99999999 is more than the 2162091 owed on 2026-03-02","reason":"AMOUNT_EXCEEDS_OUTSTANDING","recorded_at":"2026-03-02T09:05:00.000Z"}]
        """#),
    QueryCase(
        ["refusals", "--type", "ApproveLoan", "--since", "2026-03-03", "--key", "svc"],
        #"""
        [{"actor":"admin-1","code":"NOT_FOUND","command_id":"approve-L9","command_type":"ApproveLoan","details":null,"key_id":"svc","message":"no loan L9","reason":"LOAN_NOT_FOUND","recorded_at":"2026-03-03T10:00:00.000Z"}]
        """#),
    QueryCase(["refusals", "--until", "2026-03-01"], "[]"),
    // A command type in any case, as audit's event types: the journal names a known type as the
    // domain spells it, and any other as UnknownCommand.
    QueryCase(
        ["refusals", "--type", "approveloan"],
        #"""
        [{"actor":"admin-1","code":"NOT_FOUND","command_id":"approve-L9","command_type":"ApproveLoan","details":null,"key_id":"svc","message":"no loan L9","reason":"LOAN_NOT_FOUND","recorded_at":"2026-03-03T10:00:00.000Z"}]
        """#),
    QueryCase(["refusals", "--type", "unknowncommand"], "[]"),
]

/// The known history, written once for the whole suite (the queries only read it) and
/// removed when the test process exits.
private let sharedHistory: Result<KnownHistory, any Error> = {
    let made = Result { try KnownHistory.make() }
    if case .success = made { atexit { try? sharedHistory.get().remove() } }
    return made
}()

@Suite("strata query")
struct QueryCommandTests {
    private func history() throws -> KnownHistory { try sharedHistory.get() }

    @Test(arguments: queryCases)
    func jsonAnswersExactlyTheseRowsAtTheHead(_ query: QueryCase) throws {
        let history = try history()
        let result = try strata(["query"] + query.arguments + ["--data", history.data.path, "--format", "json"], expecting: 0)
        #expect(result.stdout.hasSuffix("}\n") && result.stdout.components(separatedBy: "\n").count == 2)
        let answer = try jsonLine(result.stdout)
        #expect(answer["position"] == .integer(history.head))
        #expect(answer["rows"] == (try jsonLine(query.rows)))
        #expect(answer.objectValue?.keys.sorted() == ["position", "rows"])
    }

    /// CSV read back by Python's csv module (an independent RFC 4180 reader) holds the
    /// same rows as the JSON, column for column, NULL as an empty field.
    @Test(arguments: queryCases)
    func csvHoldsTheSameRows(_ query: QueryCase) throws {
        let history = try history()
        let csv = try strata(["query"] + query.arguments + ["--data", history.data.path, "--format", "csv"], expecting: 0)
        #expect(csv.stderr == "\(query.source) at position \(history.head)\n")
        let lines = csv.stdout.components(separatedBy: "\r\n")
        #expect(lines.last == "" && !csv.stdout.replacingOccurrences(of: "\r\n", with: "").contains("\n\n"))
        let parsed = try pythonCSV(csv.stdout)
        let expected = try jsonLine(query.rows).arrayValue ?? []
        #expect(parsed.count == expected.count + 1)
        guard let header = parsed.first else { return }
        for (row, object) in zip(parsed.dropFirst(), expected) {
            let cells = header.map { column -> String in
                switch object[column] {
                case .string(let text)?: text
                case .integer(let number)?: String(number)
                default: ""
                }
            }
            #expect(row == cells)
        }
        if let first = expected.first?.objectValue { #expect(Set(header) == Set(first.keys)) }
    }

    /// The table shows every row, money in `_cents` columns as money under the name without
    /// the suffix, and ends with the position.
    @Test(arguments: queryCases)
    func tableShowsTheRowsAndThePosition(_ query: QueryCase) throws {
        let history = try history()
        let table = try strata(["query"] + query.arguments + ["--data", history.data.path], expecting: 0)
        let lines = table.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let expected = try jsonLine(query.rows).arrayValue ?? []
        let count = expected.count == 1 ? "1 row" : "\(expected.count) rows"
        #expect(lines.last == "" && lines.dropLast().last == "(\(count); \(query.source) at position \(history.head))")
        #expect(lines.count == (expected.isEmpty ? 2 : expected.count + 3))
        guard let first = expected.first?.objectValue else { return }
        let header = lines[0].split(separator: " ").map(String.init)
        #expect(header.count == first.count)
        #expect(!header.contains { $0.hasSuffix("_cents") })
        for (line, object) in zip(lines.dropFirst(), expected) {
            for (column, value) in object.objectValue ?? [:] {
                switch value {
                case .integer(let cents) where column.hasSuffix("_cents"):
                    #expect(line.contains(MoneyText.of(cents)), "\(column) in \(line)")
                case .integer(let number): #expect(line.contains(String(number)), "\(column) in \(line)")
                case .string(let text): #expect(line.contains(text), "\(column) in \(line)")
                default: break
                }
            }
        }
    }

    @Test func tableAndCSVExactly() throws {
        let history = try history()
        let table = try strata(["query", "accounts", "--agent", "agent-1", "--data", history.data.path], expecting: 0)
        #expect(
            table.stdout == """
                account_id  name          phone          email              agent_id  status  loans_count  active_loans  opened_at
                A1          Lakshmi Iyer  +919845012345                     agent-1   ACTIVE            1             1  2026-01-02T10:00:00.000Z
                A2          Das, Arjun    +919845012346  arjun@example.com  agent-1   ACTIVE            1             0  2026-01-02T10:05:00.000Z
                (2 rows; readmodels at position 19)

                """)
        let csv = try strata(["query", "accounts", "--search", "a", "--format", "csv", "--data", history.data.path], expecting: 0)
        #expect(
            csv.stdout == "account_id,name,phone,email,agent_id,status,loans_count,active_loans,opened_at\r\n"
                + "A1,Lakshmi Iyer,+919845012345,,agent-1,ACTIVE,1,1,2026-01-02T10:00:00.000Z\r\n"
                + "A2,\"Das, Arjun\",+919845012346,arjun@example.com,agent-1,ACTIVE,1,0,2026-01-02T10:05:00.000Z\r\n"
                + "A3,\"Priya \"\"PN\"\" Nair\",+919845012347,,agent-2,ACTIVE,1,1,2026-01-02T10:10:00.000Z\r\n")
        let dashboard = try strata(["query", "dashboard", "--data", history.data.path], expecting: 0)
        #expect(
            dashboard.stdout == """
                approved_agents  pending_agents  active_accounts  loans_released  principal_released  active_loans  collectible  collected  pending_approvals
                              2               1                3               2           42,000.00             2    34,163.57  10,810.46                  2
                (1 row; readmodels at position 19)

                """)
    }

    /// Before payment P1 (positions 14–15) L1 owes everything; after it, one installment less.
    /// The live file is never touched, and no scratch file is left behind.
    @Test func asOfBeforeAndAfterAPayment() throws {
        let history = try history()
        let scratch = try ChildProcess.temporaryDirectory("strata-as-of-tmp")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let live = history.data.appendingPathComponent("readmodels.db").path
        let liveBytes = try Data(contentsOf: URL(fileURLWithPath: live))
        let payment = try #require(history.positions["pay-P1"])

        func loan(asOf: String) throws -> (position: JSONValue?, row: JSONValue?) {
            let result = try strata(
                ["query", "portfolio", "--agent", "agent-1", "--status", "active", "--as-of", asOf, "--format", "json",
                 "--data", history.data.path],
                environment: ["TMPDIR": scratch.path], expecting: 0)
            let answer = try jsonLine(result.stdout)
            return (answer["position"], answer["rows"]?.arrayValue?.first)
        }
        let before = try loan(asOf: String(payment.lowerBound - 1))
        #expect(before.position == .integer(payment.lowerBound - 1))
        #expect(before.row?["total_paid_cents"] == .integer(0) && before.row?["outstanding_cents"] == .integer(3_243_137))
        #expect(before.row?["next_due_date"] == .string("2026-02-04"))
        let after = try loan(asOf: String(payment.upperBound))
        #expect(after.position == .integer(payment.upperBound))
        #expect(after.row?["total_paid_cents"] == .integer(1_081_046) && after.row?["outstanding_cents"] == .integer(2_162_091))
        #expect(after.row?["next_due_date"] == .string("2026-03-06"))
        // By time: a second before the payment was recorded, and the end of its day.
        #expect(try loan(asOf: "2026-02-04T11:59:59Z").position == .integer(payment.lowerBound - 1))
        #expect(try loan(asOf: "2026-02-04").position == .integer(payment.upperBound))
        #expect(try loan(asOf: "2026-02-04").row == after.row)
        // Before anything at all: position 0 and no rows.
        let empty = try strata(
            ["query", "dashboard", "--as-of", "0", "--format", "json", "--data", history.data.path],
            environment: ["TMPDIR": scratch.path], expecting: 0)
        #expect(try jsonLine(empty.stdout)["position"] == .integer(0))

        // Aging counts on the as-of day: as of the payment (2026-02-04) INV1 is not yet due.
        let receivables = try strata(
            ["query", "receivables", "--as-of", String(payment.upperBound), "--format", "json", "--data", history.data.path],
            environment: ["TMPDIR": scratch.path], expecting: 0)
        #expect(try jsonLine(receivables.stdout)["rows"]?.arrayValue?.first?["current_cents"] == .integer(118_000))
        let table = try strata(
            ["query", "portfolio", "--as-of", "13", "--data", history.data.path], environment: ["TMPDIR": scratch.path],
            expecting: 0)
        #expect(table.stdout.hasSuffix("(1 row; readmodels as of position 13 (recorded 2026-02-01T09:00:00.000Z))\n"))

        #expect(try Data(contentsOf: URL(fileURLWithPath: live)) == liveBytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path) == [])
    }

    /// `--as-of TIME` ages on the day it names, as `--date` would, not on the day the last event
    /// before it was recorded: the last event by 2026-04-30 was recorded on 2026-03-01, when
    /// nothing was late, but by 2026-04-30 L1 (due 2026-03-06) and L2 (due 2026-03-12) are.
    /// A position still ages on the day it was recorded.
    @Test func asOfATimeAgesOnTheDayItNames() throws {
        let history = try history()
        let scratch = try ChildProcess.temporaryDirectory("strata-as-of-tmp")
        defer { try? FileManager.default.removeItem(at: scratch) }
        func overdue(_ arguments: [String]) throws -> JSONValue? {
            let result = try strata(
                ["query", "overdue", "--format", "json", "--data", history.data.path] + arguments,
                environment: ["TMPDIR": scratch.path], expecting: 0)
            return try jsonLine(result.stdout)["rows"]
        }
        let late = try overdue(["--date", "2026-04-30"])
        #expect(late?.arrayValue?.map { [$0["loan_id"], $0["days_overdue"]] } == [["L1", 55], ["L2", 49]])
        for time in ["2026-04-30", "2026-04-30T12:00:00Z", "2026-05-01T02:00:00.000+05:30"] {
            #expect(try overdue(["--as-of", time]) == late, "--as-of \(time)")
        }
        #expect(try overdue(["--as-of", String(history.head)]) == .array([]))
    }

    /// A live file that holds the other projection (audit.db copied over readmodels.db) is
    /// named as such, as `strata status` and `strata report` name it, rather than queried into
    /// an SQLite error; an as-of query refuses it too, rather than honour the other's skips.
    @Test func aFileOfTheOtherProjectionIsNamed() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        try FileManager.default.removeItem(atPath: data + "/readmodels.db")
        try FileManager.default.copyItem(atPath: data + "/audit.db", toPath: data + "/readmodels.db")
        for extra in [[], ["--min-position", "1"], ["--as-of", "3"]] {
            let result = try strata(["query", "accounts", "--data", data] + extra, expecting: 2)
            #expect(result.stderr == "strata query: \(data)/readmodels.db holds the audit projection, not readmodels\n")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test(arguments: [
        (["query"], "strata query needs NAME"),
        (["query", "loans"], "no query named 'loans'"),
        (["query", "accounts", "--loan", "L1"], "query accounts has no --loan filter; it takes --search, --agent, --status"),
        (["query", "dashboard", "--agent", "x"], "query dashboard has no --agent filter; it takes none"),
        (["query", "portfolio", "--since", "2026-13-01"], "--since must be a date YYYY-MM-DD"),
        (["query", "audit", "--until", "yesterday"], "--until must be a time"),
        (["query", "accounts", "--format", "xml"], "--format must be table, json or csv"),
        (["query", "accounts", "--date", "2026-01-01"], "--date is for the aging queries: portfolio, overdue, receivables"),
        (["query", "overdue", "--bucket", "100+"], "--bucket must be one of 1-30, 31-60, 61-90, 90+, got '100+'"),
        (["query", "portfolio", "--status", "open"], "--status must be one of PENDING_APPROVAL, ACTIVE, REJECTED, CLOSED"),
        (["query", "pending", "--kind", "X"], "--kind must be one of AGENT, LOAN, CASHOUT, got 'X'"),
        (["query", "users", "--role", "boss"], "--role must be one of ADMIN, AGENT, got 'boss'"),
        (["query", "overdue", "--date", "01/02/2026"], "--date must be YYYY-MM-DD"),
        (["query", "accounts", "--as-of", "-3"], "--as-of position must be ≥ 0"),
        (["query", "accounts", "--as-of", "soon"], "--as-of must be a position"),
        (["query", "accounts", "--as-of", "3", "--min-position", "3"], "--min-position does not apply"),
        (["query", "accounts", "--wait", "3"], "--wait goes with --min-position"),
        (["query", "refusals", "--code", "MALFORMED"], "--code must be one of INVALID, FORBIDDEN, NOT_FOUND, CONFLICT, REJECTED"),
        (["query", "refusals", "--as-of", "3"], "query refusals reads the store's journal, which is always current"),
        (["query", "refusals", "--min-position", "3"], "--as-of and --min-position do not apply"),
        (["query", "audit", "--code", "INVALID"], "query audit has no --code filter"),
        (["query", "audit", "--action", "APPROVE_LAON"], "--action must be one of REGISTER_USER, APPROVE_AGENT"),
        (["query", "audit", "--type", "LoanAproved"], "--type must be one of AccountOpened, AccountStatusChanged"),
        (["query", "refusals", "--type", "ApproveLaon"], "--type must be one of ApproveAgent, ApproveCashout"),
        (
            ["query", "audit", "--since", "2026-03-02", "--until", "2026-03-01"],
            "--since 2026-03-02T00:00:00.000Z is after --until 2026-03-01T23:59:59.999Z"
        ),
        (
            ["query", "refusals", "--since", "2026-03-02T09:00:00.001Z", "--until", "2026-03-02T09:00:00Z"],
            "--since 2026-03-02T09:00:00.001Z is after --until 2026-03-02T09:00:00.000Z"
        ),
        (["query", "collections", "--since", "2026-03-02", "--until", "2026-03-01"], "--since 2026-03-02 is after"),
    ])
    func badRequestsAreUsageErrors(_ arguments: [String], _ message: String) throws {
        let history = try history()
        let result = try strata(arguments + ["--data", history.data.path], expecting: 2)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    /// A projection stopped at an event still answers, from where it stands, but says on
    /// standard error that the position will not move; the answer itself is as always.
    @Test func aStoppedProjectionAnswersWithAWarning() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let file = try SQLiteConnection(path: history.data.path + "/readmodels.db", mode: .readWrite)
        try file.execute(
            "UPDATE strata_checkpoint SET stopped_position = \(history.head + 1), stopped_stream = 'loan-L9', "
                + "stopped_type = 'PaymentReceived', stopped_error = 'cannot apply' WHERE name = 'readmodels'")
        file.close()
        let result = try strata(
            ["query", "accounts", "--format", "json", "--data", history.data.path], expecting: 0)
        #expect(try jsonLine(result.stdout)["position"] == .integer(history.head))
        #expect(
            result.stderr
                == "strata query: warning: readmodels is stopped at position \(history.head + 1) (PaymentReceived on "
                + "loan-L9): cannot apply; the answer reflects position \(history.head) and will not move until an "
                + "operator acts (strata project readmodels --resume or --skip)\n")
        // A broken chain is no event to skip: the store must be put right first.
        let broken = try SQLiteConnection(path: history.data.path + "/readmodels.db", mode: .readWrite)
        try broken.execute(
            "UPDATE strata_checkpoint SET stopped_error = 'the hash chain is broken: a test', "
                + "stopped_kind = 'BROKEN_CHAIN' WHERE name = 'readmodels'")
        broken.close()
        let warned = try strata(["query", "accounts", "--data", history.data.path], expecting: 0)
        #expect(
            warned.stderr.hasSuffix("(strata project readmodels --resume, once the store is put right)\n"),
            "\(warned.stderr)")
        let audit = try strata(["query", "audit", "--data", history.data.path], expecting: 0)
        #expect(audit.stderr.isEmpty, "the audit projection is not stopped")
    }

    /// A live file that is no view of the store beside it (the store restored from an older
    /// backup, or another system's) still answers, but says so: its answer is not this store's
    /// history. With no store beside it (read models on another host), nothing is said.
    @Test func aFileThatIsNotTheStoresAnswersWithAWarning() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        func replaceStore(_ make: () throws -> Void) throws {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: data + "/events.db" + suffix) }
            try make()
        }
        try replaceStore { try bootstrapAdminBesideProjections(data: data) }
        let ahead = try strata(["query", "users", "--format", "json", "--data", data], expecting: 0)
        #expect(try jsonLine(ahead.stdout)["position"] == .integer(history.head))
        #expect(
            ahead.stderr
                == "strata query: warning: readmodels is ahead of the store: checkpoint \(history.head) is beyond the "
                + "store's head, position 1: events.db is older than this file (restored from a backup?); rebuild it "
                + "from the store; the answer is not this store's history\n")

        try replaceStore {
            try bootstrapAdminBesideProjections(data: data)
            var other = BenchLendingHistory(admin: "admin-1", today: LocalDate("2026-03-01")!)
            _ = try other.grow(data + "/events.db", to: 100, checkpointKey: data + "/checkpoint.key")
        }
        let other = try strata(["query", "audit", "--data", data], expecting: 0)
        #expect(
            other.stderr.hasPrefix(
                "strata query: warning: audit is not from this store: the store's event at its checkpoint, position "
                    + "\(history.head), has hash "), "\(other.stderr)")

        try replaceStore {}
        let alone = try strata(["query", "users", "--data", data], expecting: 0)
        #expect(alone.stderr.isEmpty, "\(alone.stderr)")
        // The journal is the store itself: nothing to compare.
        try bootstrapAdminBesideProjections(data: data)
        #expect(try strata(["query", "refusals", "--data", data], expecting: 0).stderr.isEmpty)
    }

    @Test func problemsAreNamed() throws {
        let history = try history()
        let beyond = try strata(["query", "accounts", "--as-of", "20", "--data", history.data.path], expecting: 1)
        #expect(beyond.stderr.contains("--as-of 20 is beyond the store's head, position 19"))
        let waited = try strata(
            ["query", "accounts", "--min-position", "20", "--wait", "0", "--data", history.data.path], expecting: 1)
        #expect(waited.stderr.contains("readmodels did not reach position 20 within 0 s: it is at position 19"))
        #expect(waited.stdout.isEmpty)
        try withTemporaryDirectory { empty in
            let missing = try strata(["query", "accounts", "--data", empty.path], expecting: 2)
            #expect(missing.stderr.contains("no readmodels at \(empty.path)/readmodels.db"))
            let notYet = try strata(["query", "accounts", "--min-position", "1", "--wait", "0", "--data", empty.path], expecting: 1)
            #expect(notYet.stderr.contains("readmodels did not reach position 1 within 0 s: its file does not exist yet"))
            let noStore = try strata(["query", "refusals", "--data", empty.path], expecting: 2)
            #expect(noStore.stderr.contains("no event store at \(empty.path)/events.db"))
            try FileManager.default.copyItem(
                atPath: history.data.path + "/audit.db", toPath: empty.path + "/events.db")
            let foreign = try strata(["query", "refusals", "--data", empty.path], expecting: 1)
            #expect(foreign.stderr.contains("\(empty.path)/events.db is not a Strata event store"), "\(foreign.stderr)")
            #expect(foreign.stdout.isEmpty)
        }
    }
    /// What an as-of build finds in the history (an event it cannot apply) is exit 1; what keeps
    /// the machine from building it (a key store that cannot be read, a full TMPDIR) is exit 2, as
    /// `strata rebuild` says of the same. Every failure of the build was exit 1, so a script took
    /// a broken key store for a broken history.
    @Test func anAsOfBuildTheEnvironmentStopsIsExitTwo() throws {
        try withTemporaryDirectory { directory in
            let data = directory.path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            try bootstrapAdmin(data: data, id: "root")
            let keyStore = data + "/subject-keys.db"
            let kept = try Data(contentsOf: URL(fileURLWithPath: keyStore))
            try writeText(String(repeating: "not a database ", count: 100), to: keyStore)
            let unreadable = try strata(["query", "users", "--as-of", "1", "--data", data], expecting: 2)
            #expect(unreadable.stderr.contains("cannot open the key store \(keyStore)"), "\(unreadable.stderr)")
            #expect(unreadable.stdout.isEmpty)

            try kept.write(to: URL(fileURLWithPath: keyStore))
            let store = try SQLiteConnection(path: data + "/events.db", mode: .readWrite)
            try store.execute("UPDATE events SET data = data || ' ' WHERE position = 1")
            store.close()
            let broken = try strata(["query", "users", "--as-of", "1", "--data", data], expecting: 1)
            #expect(broken.stderr.contains("the history up to position 1 cannot be applied"), "\(broken.stderr)")
            #expect(broken.stdout.isEmpty)
        }
    }
}

/// Parses CSV with Python's csv module and returns its rows.
private func pythonCSV(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String]] {
    let directory = try ChildProcess.temporaryDirectory("strata-csv")
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("answer.csv")
    try Data(text.utf8).write(to: file)
    let script = "import csv, json, sys; print(json.dumps(list(csv.reader(open(sys.argv[1], newline='')))))"
    let result = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, file.path])
    #expect(result.exitCode == 0, "\(result.stderr)", sourceLocation: sourceLocation)
    let rows = try jsonLine(result.stdout).arrayValue ?? []
    return rows.map { ($0.arrayValue ?? []).map { $0.stringValue ?? "" } }
}
