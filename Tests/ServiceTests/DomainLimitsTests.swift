import Bus
import CommandService
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// The domain limits of the config file, through the real processes: `serve` decides by them
/// (and by DOMAIN's defaults without them), a value out of range stops every command before it
/// starts, and `up` and `demo` run within them.
@Suite struct DomainLimitsTests {
    /// A lower maximum principal, a higher minimum cash-out, and slabs of 0 and 10 % only.
    static let configured =
        #"{"domain": {"maximumPrincipalCents": 5000000, "minimumCashoutCents": 50000, "taxSlabsBp": [0, 1000]}}"#

    /// What a service answered: accepted, or the refusal's code, reason and details.
    enum Outcome: Equatable, CustomStringConvertible {
        case accepted
        case refused(String, String, details: [String])

        init(_ reply: JSONValue) {
            if reply["ok"] == .bool(true) {
                self = .accepted
                return
            }
            let error = reply["error"]
            let details = (error?["details"]?.arrayValue ?? []).map {
                "\($0["field"]?.stringValue ?? "?") \($0["reason"]?.stringValue ?? "?")"
            }
            self = .refused(
                error?["code"]?.stringValue ?? "?", error?["reason"]?.stringValue ?? "?", details: details)
        }

        var description: String {
            switch self {
            case .accepted: "accepted"
            case .refused(let code, let reason, let details): "\(code) \(reason) \(details)"
            }
        }
    }

    /// Sends each body in order over one connection and returns what each got.
    private func decide(_ bodies: [CommandBody], by service: ServiceProcess) throws -> [String: Outcome] {
        let context = try ZMQContext()
        let client = try service.commandClient(context)
        defer { client.close() }
        for body in bodies { try client.send(body.json) }
        var outcomes: [String: Outcome] = [:]
        for body in bodies {
            let reply = try #require(try client.receive(timeoutMilliseconds: 30_000), "no reply for \(body.id)")
            outcomes[body.id] = Outcome(try JSONParser.parse(reply))
        }
        return outcomes
    }

    /// An agent with an account, then a loan at and one above the configured maximum, invoices
    /// at a configured slab and at a default one, and a cash-out below the configured minimum
    /// (the agent has earned nothing, so past the minimum it is refused for want of earnings).
    private func commands(_ workload: LendingWorkload) -> [CommandBody] {
        let agent = workload.agentId(0)
        func loan(_ id: String, principal: Int64) -> CommandBody {
            CommandBody(
                id: id, type: "RequestLoan", actor: agent,
                payload: [
                    "loanId": .string(id), "accountId": .string(workload.accountId(0)),
                    "principalCents": .integer(principal), "monthlyRateBp": 400, "tenureMonths": 6,
                    "frequency": "MONTHLY",
                ])
        }
        func invoice(_ id: String, taxRateBp: Int64) -> CommandBody {
            let line: JSONValue = [
                "description": "Field survey", "quantityMilli": 1000, "unitPriceCents": 250_000,
                "taxRateBp": .integer(taxRateBp),
            ]
            let today = workload.today.description
            return CommandBody(
                id: id, type: "CreateInvoice", actor: agent,
                payload: [
                    "invoiceId": .string(id), "customer": ["partyId": "party-1", "name": "Kaveri Textiles"],
                    "issueDate": .string(today), "dueDate": .string(today), "lines": [line],
                ])
        }
        return workload.setup() + [
            loan("loan-at-maximum", principal: 5_000_000),
            loan("loan-above-maximum", principal: 5_000_001),
            invoice("invoice-at-10", taxRateBp: 1_000),
            invoice("invoice-at-18", taxRateBp: 1_800),
            CommandBody(
                id: "cashout-below-minimum", type: "RequestCashout", actor: agent,
                payload: ["cashoutId": "cashout-1", "agentId": .string(agent), "amountCents": 20_000]),
        ]
    }

    @Test(arguments: [true, false])
    func serveDecidesByTheConfiguredLimits(configured: Bool) throws {
        let data = try ChildProcess.temporaryDirectory("strata-limits")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        // Outside the data directory, as an operator's /etc/strata/strata.json would be.
        let config = data.appendingPathComponent("../\(data.lastPathComponent)-strata.json").standardizedFileURL.path
        try Data(Self.configured.utf8).write(to: URL(fileURLWithPath: config))
        defer { try? FileManager.default.removeItem(atPath: config) }
        let service = try ServiceProcess(dataDirectory: data, arguments: configured ? ["--config", config] : [])
        defer { service.stop() }

        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "lim", agents: 1, accountsPerAgent: 1, today: Timestamp.now().date)
        let outcomes = try decide(commands(workload), by: service)
        for body in workload.setup() {
            #expect(outcomes[body.id] == .accepted, "\(body.id): \(outcomes[body.id].map(\.description) ?? "-")")
        }
        let expected: [String: Outcome] =
            configured
            ? [
                "loan-at-maximum": .accepted,
                "loan-above-maximum": .refused("INVALID", "ABOVE_MAXIMUM", details: ["principalCents ABOVE_MAXIMUM"]),
                "invoice-at-10": .accepted,
                "invoice-at-18": .refused("INVALID", "NOT_A_TAX_SLAB", details: ["lines[0].taxRateBp NOT_A_TAX_SLAB"]),
                "cashout-below-minimum": .refused(
                    "INVALID", "BELOW_MINIMUM_CASHOUT", details: ["amountCents BELOW_MINIMUM_CASHOUT"]),
            ]
            : [
                "loan-at-maximum": .accepted,
                "loan-above-maximum": .accepted,
                "invoice-at-10": .refused("INVALID", "NOT_A_TAX_SLAB", details: ["lines[0].taxRateBp NOT_A_TAX_SLAB"]),
                "invoice-at-18": .accepted,
                "cashout-below-minimum": .refused("REJECTED", "INSUFFICIENT_EARNINGS", details: []),
            ]
        for (id, outcome) in expected.sorted(by: { $0.key < $1.key }) {
            #expect(outcomes[id] == outcome, "\(id): \(outcomes[id].map(\.description) ?? "no reply")")
        }
        let logged =
            configured
            ? "domain limits maximumPrincipalCents=5000000 minimumCashoutCents=50000 taxSlabsBp=0,1000"
            : "domain limits maximumPrincipalCents=100000000 minimumCashoutCents=10000 taxSlabsBp=0,500,1200,1800,2800"
        #expect(service.log.contains(logged), "\(service.log)")
        #expect(service.stop() == 0, "\(service.log)")
    }

    @Test(arguments: [
        (
            #"{"domain": {"maximumPrincipalCents": 0}}"#,
            "'domain.maximumPrincipalCents' must be an integer of cents from 1 to 1000000000000000"
        ),
        (
            #"{"domain": {"minimumCashoutCents": 1000000000000001}}"#,
            "'domain.minimumCashoutCents' must be an integer of cents from 1 to 1000000000000000"
        ),
        (
            #"{"domain": {"taxSlabsBp": [0, 500, 500]}}"#,
            "'domain.taxSlabsBp' must be a non-empty array of distinct integers from 0 to 10000 (basis points); "
                + "500 is there twice"
        ),
        (#"{"domain": {"taxSlab": [0]}}"#, "unknown setting 'domain.taxSlab'"),
    ])
    func limitsOutOfRangeStopEveryCommandBeforeItStarts(_ text: String, _ message: String) throws {
        let data = try ChildProcess.temporaryDirectory("strata-limits")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let config = data.appendingPathComponent("bad.json").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: config))
        for command in [["serve"], ["up"], ["demo"], ["status"]] {
            let run = try ChildProcess.strata(command + ["--data", data.path, "--config", config])
            #expect(run.exitCode == 2, "\(command): \(run.stdout)\(run.stderr)")
            #expect(run.stderr.contains("config file \(config): \(message)"), "\(command): \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("checkpoint.key").path))
    }

    /// `up` hands the config file to `serve`, and `demo`, given the same file, keeps within its
    /// limits: a maximum below most of the demo's principals, and slabs it does not use by default.
    @Test func upAndTheDemoRunWithinTheConfiguredLimits() throws {
        let data = try ChildProcess.temporaryDirectory("strata-limits")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let config = data.appendingPathComponent("limits.json").path
        let limits = #"{"domain": {"maximumPrincipalCents": 3000000, "minimumCashoutCents": 25000, "#
            + #""taxSlabsBp": [0, 1000]}}"#
        try Data(limits.utf8).write(to: URL(fileURLWithPath: config))
        let endpoints = try ["commands", "events", "history"].map {
            ("--\($0)", "tcp://127.0.0.1:\(try freeLoopbackPort())")
        }
        let settings = ["--data", data.path, "--config", config]
        let up = try StrataProcess(
            ["up"] + settings + endpoints.flatMap { [$0.0, $0.1] } + ["--key", ServiceProcess.Keys.service])
        defer { up.stop() }
        for name in ["serve", "project-readmodels", "project-audit"] {
            try up.waitForLine(containing: "\(name): ready ")
        }
        #expect(
            up.log.contains("domain limits maximumPrincipalCents=3000000 minimumCashoutCents=25000 taxSlabsBp=0,1000"),
            "\(up.log)")

        let demo = try ChildProcess.strata(
            ["demo", "--prefix", "lim", "--commands", endpoints[0].1, "--timeout", "120"] + settings)
        #expect(demo.exitCode == 0, "\(demo.stdout)\(demo.stderr)\n\(up.log)")
        #expect(demo.stdout.contains(" 0 refused"), "\(demo.stdout)")

        let replay = try ChildProcess.strata(["replay", "--type", "LoanRequested,InvoiceCreated", "--data", data.path])
        #expect(replay.exitCode == 0, "\(replay.stderr)")
        var loans = 0
        var lines = 0
        for line in replay.stdout.split(separator: "\n") {
            let event = try JSONParser.parse(Array(line.utf8))
            if let principal = event["data"]?["principalCents"]?.integerValue {
                loans += 1
                #expect(principal <= 3_000_000, "\(line)")
            }
            for invoiceLine in event["data"]?["lines"]?.arrayValue ?? [] {
                lines += 1
                #expect([0, 1000].contains(invoiceLine["taxRateBp"]?.integerValue), "\(line)")
            }
        }
        #expect(loans == DemoMonth.loans && lines > 0, "\(replay.stdout)")
        up.send(signal: SIGINT)
        #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
    }

    /// `strata status --config FILE` with domain limits: what an operator runs first.
    @Test func otherCommandsReadAConfigFileWithLimits() throws {
        let data = try ChildProcess.temporaryDirectory("strata-limits")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let config = data.appendingPathComponent("strata.json").path
        try Data(Self.configured.utf8).write(to: URL(fileURLWithPath: config))
        for arguments in [["--config", config], []] {
            let status = try ChildProcess.strata(["status", "--data", data.path] + arguments)
            #expect(status.exitCode == 0, "\(arguments): \(status.stdout)\(status.stderr)")
        }
    }
}
