import Bus
import CommandService
import EventStore
import Events
import Foundation
import ProjectorRuntime
import StrataCore
import StrataTesting
import SubjectKeys
import Synchronization
import Testing
import Workloads

// Erasure (crypto-shredding) end to end, on real processes, files and sockets
// (docs/personal-data.md): after `strata forget`, a subject's personal data is in no file of
// the data directory and was never on the bus, while the chain verifies, rebuilds equal the
// live read models, and its loans and amounts are still reported.

/// A borrower's personal data, each piece distinctive enough to search raw bytes for.
private struct Borrower {
    let accountId: String
    let name: String
    let phone: String
    let email: String
    let address: String
    let alternatePhone: String

    var personalData: [String] { [name, phone, email, address, alternatePhone] }
}

private let erased = Borrower(
    accountId: "er-kavya", name: "Kavya Erasmus-Ramaswamy", phone: "+919800011122", email: "kavya.erasure@example.com",
    address: "17 Lotus Lane, Kuvempunagar, Mysuru", alternatePhone: "+919800055566")
private let kept = Borrower(
    accountId: "er-meera", name: "Meera Keepsake-Iyer", phone: "+919800033344", email: "meera.keepsake@example.com",
    address: "9 Jasmine Street, Gokulam, Mysuru", alternatePhone: "+919800077788")
private let party = (id: "er-party-suresh", name: "Suresh Invoicewala Traders", taxId: "29ERASE1234F1Z5")
private let personalDataKey = "pd-reader"

private func occurs(_ text: String, in bytes: [UInt8]) -> Bool {
    let needle = Array(text.utf8)
    guard needle.count <= bytes.count, let first = needle.first else { return false }
    var index = 0
    while index <= bytes.count - needle.count {
        if bytes[index] == first && bytes[index..<(index + needle.count)].elementsEqual(needle) { return true }
        index += 1
    }
    return false
}

/// The files of `directory` that hold `text`, by name.
private func filesHolding(_ text: String, under directory: URL) throws -> [String] {
    try filesUnder(directory).filter { occurs(text, in: $0.bytes) }.map(\.path)
}

/// Every frame a SUB socket receives from the start, on a thread of its own.
private final class BusRecorder: Sendable {
    private let frames = Mutex<[[UInt8]]>([])
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(context: ZMQContext, endpoint: String) throws {
        let ready = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let thread = Thread { [self] in
            defer { finished.signal() }
            do {
                let sub = try ZMQSocket(context, .subscriber)
                defer { sub.close() }
                try sub.setHighWaterMarks(send: 0, receive: 0)
                try sub.subscribe("")
                try sub.connect(endpoint)
                ready.signal()
                while !stopping.load(ordering: .acquiring) {
                    guard try !zmqPollReadable([sub], timeoutMilliseconds: 50).isEmpty else { continue }
                    while let message = try sub.receive(wait: false) {
                        frames.withLock { $0 += message }
                    }
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
                ready.signal()
            }
        }
        thread.start()
        ready.wait()
        if let failure = failure.withLock({ $0 }) { throw ServiceProcessError("bus recorder: \(failure)") }
    }

    var captured: [[UInt8]] { frames.withLock { $0 } }

    /// Waits until a heartbeat arrived, so the subscription is in place before anything is sent.
    func awaitHeartbeat(timeout: TimeInterval = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !captured.contains(Heartbeat.topic) {
            guard Date() < deadline else { throw ServiceProcessError("no heartbeat on the bus") }
            usleep(20_000)
        }
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        finished.wait()
    }
}

private func body(_ id: String, _ type: String, actor: String, _ payload: [String: JSONValue]) -> CommandBody {
    CommandBody(id: id, type: type, actor: actor, payload: payload)
}

private func openAccount(_ b: Borrower, agent: String) -> CommandBody {
    body(
        "open-\(b.accountId)", "OpenAccount", actor: agent,
        [
            "accountId": .string(b.accountId), "name": .string(b.name), "phone": .string(b.phone),
            "email": .string(b.email), "address": .string(b.address), "assignedAgentId": .string(agent),
        ])
}

/// A loan's life for `accountId`: requested, approved, one payment.
private func loan(_ id: String, accountId: String, agent: String, principal: Int64, paid: Int64) -> [CommandBody] {
    let today = Timestamp.now().date.description
    return [
        body(
            "\(id)-request", "RequestLoan", actor: agent,
            [
                "loanId": .string(id), "accountId": .string(accountId), "principalCents": .integer(principal),
                "monthlyRateBp": 300, "tenureMonths": 6, "frequency": "MONTHLY", "requestedOn": .string(today),
            ]),
        body("\(id)-approve", "ApproveLoan", actor: ServiceProcess.admin, ["loanId": .string(id), "approvedOn": .string(today)]),
        body(
            "\(id)-pay", "ReceivePayment", actor: agent,
            [
                "paymentId": .string("\(id)-p1"), "loanId": .string(id), "amountCents": .integer(paid),
                "paidOn": .string(today), "method": "CASH",
            ]),
    ]
}

private func invoice(agent: String) -> [CommandBody] {
    let today = Timestamp.now().date.description
    return [
        body(
            "er-inv-1-create", "CreateInvoice", actor: agent,
            [
                "invoiceId": "er-inv-1",
                "customer": ["partyId": .string(party.id), "name": .string(party.name), "taxId": .string(party.taxId)],
                "issueDate": .string(today), "dueDate": .string(today),
                "lines": [["description": "Rice, 25 kg", "quantityMilli": 2000, "unitPriceCents": 150_000, "taxRateBp": 0]],
            ]),
        body(
            "er-inv-1-pay", "RecordInvoicePayment", actor: agent,
            ["paymentId": "er-inv-1-p1", "invoiceId": "er-inv-1", "amountCents": 100_000, "paidOn": .string(today), "method": "BANK"]),
    ]
}

/// `strata forget …`: the exit code and the reply it printed.
private func forget(
    _ subject: String, kind: String? = nil, actor: String = ServiceProcess.admin, data: URL, commands: String,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> (exitCode: Int32, reply: JSONValue) {
    let result = try ChildProcess.strata(
        ["forget", "--subject", subject, "--reason", "data subject request", "--actor", actor]
            + (kind.map { ["--kind", $0] } ?? []) + ["--data", data.path, "--commands", commands]
            + ["--key", ServiceProcess.Keys.service])
    let reply = try #require(
        try? JSONParser.parse(Array(result.stdout.utf8)), "forget printed no reply: \(result.stdout)\(result.stderr)",
        sourceLocation: sourceLocation)
    return (result.exitCode, reply)
}

/// Runs `strata ARGS --data DATA` and returns its standard output; requires exit code 0.
private func strataOutput(_ arguments: [String], data: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
    let result = try ChildProcess.strata(arguments + ["--data", data.path])
    #expect(
        result.exitCode == 0, "strata \(arguments.joined(separator: " ")): \(result.stdout)\(result.stderr)",
        sourceLocation: sourceLocation)
    return result.stdout
}

/// The rows of `strata query NAME --format json`.
private func queryRows(_ name: String, _ extra: [String] = [], data: URL) throws -> [JSONValue] {
    let json = try JSONParser.parse(Array(try strataOutput(["query", name, "--format", "json"] + extra, data: data).utf8))
    return try #require(json["rows"]?.arrayValue, "\(name): \(json)")
}

/// Waits until both projections have applied the store's head.
private func awaitProjections(data: URL, timeout: TimeInterval = 60) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        let json = try JSONParser.parse(Array(try strataOutput(["status", "--format", "json"], data: data).utf8))
        let head = try #require(json["head"])
        if json["projections"] == ["readmodels": head, "audit": head] { return }
        guard Date() < deadline else { throw ServiceProcessError("the projections did not reach the head: \(json)") }
        usleep(100_000)
    }
}

@Suite(.serialized) struct ErasureTests {
    /// The issue's "done when", end to end; and a projector on "another host" (a data
    /// directory without the key store) that takes personal data opened from history.
    @Test func forgetLeavesTheSubjectsPersonalDataNowhereWhileTheChainAndTheAmountsStay() throws {
        let data = try ChildProcess.temporaryDirectory("strata-erasure")
        defer { try? FileManager.default.removeItem(at: data) }
        let remote = try ChildProcess.temporaryDirectory("strata-erasure-remote")
        defer { try? FileManager.default.removeItem(at: remote) }
        try ServiceProcess.prepare(data)
        let made = try ChildProcess.strata(
            ["keys", "new", personalDataKey, "--scope", "history,personal-data", "--data", data.path])
        try #require(made.exitCode == 0, "\(made.stderr)")
        let endpoints = try ["commands", "events", "history"].map { ("--\($0)", "tcp://127.0.0.1:\(try freeLoopbackPort())") }
        let commands = endpoints[0].1
        let up = try StrataProcess(
            ["up", "--data", data.path] + endpoints.flatMap { [$0.0, $0.1] } + ["--key", ServiceProcess.Keys.service])
        defer { up.stop() }
        for name in ["serve", "project-readmodels", "project-audit"] { try up.waitForLine(containing: "\(name): ready ") }
        let remoteProjector = try StrataProcess(
            ["project", "readmodels", "--data", remote.path, "--events", endpoints[1].1, "--history", endpoints[2].1]
                + ["--keys", data.appendingPathComponent("keys.json").path, "--key", personalDataKey]
                + ["--open-through-history"])
        defer { remoteProjector.stop() }
        try remoteProjector.waitForLine(containing: "ready name=readmodels")

        // Every frame on the bus, from before the first command.
        let context = try ZMQContext()
        let bus = try BusRecorder(context: context, endpoint: endpoints[1].1)
        try bus.awaitHeartbeat()

        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "er", agents: 2, accountsPerAgent: 2, today: Timestamp.now().date)
        let agent = workload.agentId(0)
        let bodies =
            workload.setup() + [openAccount(erased, agent: agent), openAccount(kept, agent: agent)]
            + [
                body(
                    "er-update-kavya", "UpdateAccount", actor: agent,
                    ["accountId": .string(erased.accountId), "alternatePhone": .string(erased.alternatePhone)]),
                body(
                    "er-update-meera", "UpdateAccount", actor: agent,
                    ["accountId": .string(kept.accountId), "alternatePhone": .string(kept.alternatePhone)]),
            ]
            + loan("er-loan-k1", accountId: erased.accountId, agent: agent, principal: 5_000_000, paid: 400_000)
            + loan("er-loan-k2", accountId: erased.accountId, agent: agent, principal: 1_200_000, paid: 150_000)
            + loan("er-loan-m1", accountId: kept.accountId, agent: agent, principal: 800_000, paid: 100_000)
            + invoice(agent: agent) + (0..<4).flatMap(workload.loan)
        try System.send(
            bodies, endpoint: commands, secret: try ServiceProcess.secret(of: ServiceProcess.Keys.service, in: data),
            context: context)
        try awaitProjections(data: data)

        // Before any erasure: the store holds personal data sealed only, the read models in clear.
        for text in erased.personalData + kept.personalData + [party.name, party.taxId] {
            #expect(try filesHolding(text, under: data).filter { $0.hasPrefix("events.db") } == [], "\(text) in events.db")
            #expect(try filesHolding(text, under: data).contains { $0.hasPrefix("readmodels.db") }, "\(text) in readmodels.db")
        }
        let portfolioBefore = try queryRows("portfolio", ["--account", erased.accountId], data: data)
        #expect(portfolioBefore.count == 2)

        // Forget the borrower, and the invoice customer.
        let forgotten = try forget(erased.accountId, data: data, commands: commands)
        #expect(forgotten.exitCode == 0, "\(forgotten.reply)")
        #expect(forgotten.reply["events"]?.arrayValue?.first?["type"] == "PersonalDataErased")
        #expect(forgotten.reply["events"]?.arrayValue?.first?["stream"] == .string("account-\(erased.accountId)"))
        let forgottenParty = try forget(party.id, kind: "PARTY", data: data, commands: commands)
        #expect(forgottenParty.exitCode == 0, "\(forgottenParty.reply)")
        try awaitProjections(data: data)
        // A second erasure of the same subject is refused.
        let again = try forget(erased.accountId, data: data, commands: commands)
        #expect(again.exitCode == 1)
        #expect(again.reply["error"]?["code"] == "REJECTED")
        #expect(again.reply["error"]?["reason"] == "ALREADY_ERASED")

        // Nowhere in the data directory (every file, WAL files included), while it all runs…
        let files = try filesUnder(data).map(\.path)
        for name in ["events.db", "readmodels.db", "audit.db", SubjectKeyStore.fileName] {
            #expect(files.contains(name), "\(name) is among the files searched: \(files)")
        }
        for text in erased.personalData + [party.name, party.taxId] {
            #expect(try filesHolding(text, under: data) == [], "\(text) survives")
        }
        // …while the search does find personal data that was not erased, in clear, where it belongs.
        for text in kept.personalData {
            #expect(try filesHolding(text, under: data).contains { $0.hasPrefix("readmodels.db") }, "\(text) is in readmodels.db")
        }

        // The projector away from the key store took the same personal data from history, and
        // the same erasures: its file equals the live one, and holds nothing of the erased.
        let status = try JSONParser.parse(Array(try strataOutput(["status", "--format", "json"], data: data).utf8))
        let head = try #require(status["head"]?.integerValue)
        let remoteFile = remote.appendingPathComponent("readmodels.db").path
        let deadline = Date().addingTimeInterval(30)
        while (try ProjectionSnapshot(path: remoteFile)?.checkpoint ?? 0) < head && Date() < deadline { usleep(50_000) }
        let remoteSnapshot = try #require(try ProjectionSnapshot(path: remoteFile))
        #expect(remoteSnapshot.checkpoint == head && remoteSnapshot.stop == nil, "\(remoteProjector.log)")
        let comparison = try remoteSnapshot.compare(with: data.appendingPathComponent("readmodels.db").path)
        #expect(comparison.difference == nil, "\(comparison.difference ?? "")")
        #expect(comparison.rows > 100)
        #expect(remoteProjector.log.contains("caught up through history to open the personal data of position"))
        #expect(!FileManager.default.fileExists(atPath: remote.appendingPathComponent(SubjectKeyStore.fileName).path))
        for text in erased.personalData + [party.name, party.taxId] {
            #expect(try filesHolding(text, under: remote) == [], "\(text) survives on the remote projector")
        }
        for text in kept.personalData {
            #expect(try filesHolding(text, under: remote).contains { $0.hasPrefix("readmodels.db") }, "\(text) remote")
        }

        // Never on the bus, in any frame: the events went out sealed.
        bus.stop()
        let frames = bus.captured
        for text in erased.personalData + kept.personalData + [party.name, party.taxId] {
            #expect(!frames.contains { occurs(text, in: $0) }, "\(text) on the bus")
        }
        // The recorder did see those events, sealed under the subjects' keys, and the erasures.
        #expect(
            frames.contains {
                occurs("\"accountId\":\"\(erased.accountId)\"", in: $0) && occurs("\"pd1.account:\(erased.accountId):", in: $0)
            })
        #expect(frames.contains { occurs("\"pd1.party:\(party.id):", in: $0) })
        #expect(frames.filter { occurs("PersonalDataErased", in: $0) }.count == 4, "two topics, two events")

        // The chain still verifies; rebuilds equal the live files.
        #expect(try strataOutput(["verify"], data: data).contains("intact"))
        for name in ["readmodels", "audit"] {
            #expect(try strataOutput(["rebuild", name, "--compare"], data: data).contains("equal:"))
        }

        // The loans and amounts are still reported; the personal fields read "[erased]".
        let portfolio = try queryRows("portfolio", ["--account", erased.accountId], data: data)
        #expect(portfolio == portfolioBefore)
        #expect(portfolio.map { $0["principal_cents"] } == [5_000_000, 1_200_000])
        #expect(portfolio.map { $0["total_paid_cents"] } == [400_000, 150_000])
        let accounts = try queryRows("accounts", data: data)
        let kavya = try #require(accounts.first { $0["account_id"] == .string(erased.accountId) })
        #expect(kavya["name"] == "[erased]" && kavya["phone"] == "[erased]" && kavya["email"] == "[erased]")
        #expect(kavya["loans_count"] == 2 && kavya["status"] == "ACTIVE")
        let meera = try #require(accounts.first { $0["account_id"] == .string(kept.accountId) })
        #expect(meera["name"] == .string(kept.name) && meera["email"] == .string(kept.email))
        // Search by name still finds others.
        let found = try queryRows("accounts", ["--search", "Keepsake"], data: data)
        #expect(found.map { $0["account_id"] } == [.string(kept.accountId)])
        #expect(try queryRows("accounts", ["--search", "Erasmus"], data: data) == [])
        let invoices = try queryRows("invoices", ["--customer", party.id], data: data)
        #expect(invoices.map { $0["customer_name"] } == ["[erased]"])
        #expect(invoices.map { $0["total_cents"] } == [300_000])
        #expect(invoices.map { $0["paid_cents"] } == [100_000])
        let receivables = try queryRows("receivables", ["--customer", party.id], data: data)
        #expect(receivables.map { $0["name"] } == ["[erased]"])

        // As of a position before the erasure, the key is gone all the same.
        let beforeErasure = try #require(forgotten.reply["events"]?.arrayValue?.first?["position"]?.integerValue) - 1
        let asOf = try queryRows("accounts", ["--as-of", String(beforeErasure)], data: data)
        #expect(asOf.first { $0["account_id"] == JSONValue.string(erased.accountId) }?["name"] == "[erased]")
        #expect(asOf.first { $0["account_id"] == JSONValue.string(kept.accountId) }?["name"] == .string(kept.name))

        // Replay prints what is stored: the sealed form.
        let replay = try strataOutput(["replay", "--stream", "account-\(erased.accountId)"], data: data)
        #expect(replay.contains("\"pd1.account:\(erased.accountId):"))
        for text in erased.personalData { #expect(!replay.contains(text)) }

        // The audit log names the people by id.
        let audit = try strataOutput(["query", "audit", "--format", "json"], data: data)
        #expect(audit.contains("erased the personal data of account \(erased.accountId)"))
        for text in kept.personalData { #expect(!audit.contains(text)) }
    }

    /// Who may erase what, history's opened fields, and email uniqueness on the keyed digest.
    @Test func erasureIsRefusedWhereTheRulesSayAndHistoryOpensOnlyForThePersonalDataScope() throws {
        let data = try ChildProcess.temporaryDirectory("strata-erasure-rules")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let made = try ChildProcess.strata(
            ["keys", "new", personalDataKey, "--scope", "history,personal-data", "--data", data.path])
        try #require(made.exitCode == 0, "\(made.stderr)")
        var service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        let context = try ZMQContext()
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "eq", agents: 2, accountsPerAgent: 1, today: Timestamp.now().date)
        let (agent, other) = (workload.agentId(0), workload.agentId(1))
        // `other` is both a user and, through this account, an account: an ambiguous id.
        var twin = openAccount(kept, agent: agent)
        twin = body(
            "open-twin", "OpenAccount", actor: agent,
            twin.payload.merging(["accountId": .string(other), "name": "Twin Account"]) { $1 })
        try System.send(
            workload.setup() + [
                openAccount(kept, agent: agent), twin,
                body("eq-profile", "UpdateProfile", actor: other, ["userId": .string(other), "fullName": "Ravi Userkind-Agent"]),
            ], endpoint: service.commands, secret: try service.secret(of: ServiceProcess.Keys.service), context: context)

        func refusal(_ r: (exitCode: Int32, reply: JSONValue)) -> [String?] {
            [r.reply["error"]?["code"]?.stringValue, r.reply["error"]?["reason"]?.stringValue]
        }
        let commands = service.commands
        let unknown = try forget("nobody", data: data, commands: commands)
        #expect(unknown.exitCode == 1)
        #expect(refusal(unknown) == ["NOT_FOUND", "SUBJECT_NOT_FOUND"])
        let ambiguous = try forget(other, data: data, commands: commands)
        #expect(ambiguous.exitCode == 1)
        #expect(refusal(ambiguous) == ["INVALID", "AMBIGUOUS_SUBJECT"])
        let byAgent = try forget(kept.accountId, actor: agent, data: data, commands: commands)
        #expect(byAgent.exitCode == 1)
        #expect(refusal(byAgent) == ["FORBIDDEN", "ROLE_NOT_ALLOWED"])
        let user = try forget(other, kind: "USER", data: data, commands: commands)
        #expect(user.exitCode == 0, "\(user.reply)")
        #expect(user.reply["events"]?.arrayValue?.first?["stream"] == .string("user-\(other)"))
        let twice = try forget(other, kind: "user", data: data, commands: commands)
        #expect(refusal(twice) == ["REJECTED", "ALREADY_ERASED"])
        let usage = try ChildProcess.strata(["forget", "--subject", other, "--data", data.path])
        #expect(usage.exitCode == 2, "--reason and --actor are required: \(usage.stderr)")

        // History opens personal data for a key with the scope, beside the events, never in them.
        let reader = try service.historyClient(context, key: personalDataKey)
        defer { reader.close() }
        let plainRaw = try #require(try reader.request(HistoryRequest(after: 0, limit: 1000).json))
        let openRaw = try #require(try reader.request(HistoryRequest(after: 0, limit: 1000, open: true).json))
        let plain = try JSONParser.parse(plainRaw)
        let open = try JSONParser.parse(openRaw)
        #expect(plain["ok"] == true && plain["opened"] == nil)
        #expect(open["ok"] == true, "\(open)")
        #expect(historyEventSlices(openRaw) == historyEventSlices(plainRaw), "the events are the stored bytes either way")
        let events = try #require(open["events"]?.arrayValue)
        func position(_ type: String, _ stream: String) throws -> String {
            let event = events.first { $0["type"] == .string(type) && $0["stream"] == .string(stream) }
            guard let position = event?["position"]?.integerValue else {
                throw ServiceProcessError("no \(type) in \(stream)")
            }
            return String(position)
        }
        let opened = try #require(open["opened"])
        #expect(
            opened[try position("AccountOpened", "account-\(kept.accountId)")]
                == .object([
                    "/name": .string(kept.name), "/phone": .string(kept.phone), "/email": .string(kept.email),
                    "/address": .string(kept.address),
                ]))
        #expect(opened[try position("UserRegistered", "user-root")] == ["/email": "root@example.com"])
        #expect(opened[try position("UserRegistered", "user-\(other)")] == ["/email": "[erased]"])
        #expect(opened[try position("ProfileUpdated", "user-\(other)")] == ["/fullName": "[erased]"])
        #expect(opened[try position("UserRegistered", "user-\(agent)")] == ["/email": .string("\(agent)@agents.example.com")])
        #expect(opened[try position("AgentApproved", "user-\(agent)")] == nil, "events without personal data are not listed")
        // In the events themselves, every one of those fields is sealed.
        let stored = try #require(events.first { $0["stream"] == .string("account-\(kept.accountId)") })
        for field in ["name", "phone", "email", "address"] {
            #expect(stored["data"]?[field]?.stringValue?.hasPrefix("pd1.account:\(kept.accountId):") == true)
        }

        // Without the scope, asking to open is refused; reading history is not.
        let service1 = try service.historyClient(context)
        defer { service1.close() }
        let refused = try JSONParser.parse(
            try #require(try service1.request(HistoryRequest(after: 0, limit: 10, open: true).json)))
        #expect(refused["ok"] == false)
        #expect(refused["error"]?["code"] == "FORBIDDEN" && refused["error"]?["reason"] == "KEY_SCOPE")
        let allowed = try JSONParser.parse(try #require(try service1.request(HistoryRequest(after: 0, limit: 10).json)))
        #expect(allowed["ok"] == true && allowed["events"]?.arrayValue?.count == 10)

        // Emails stay unique, checked on a keyed digest of the sealed values, also once the
        // service has started again and folded them back from the store. An erased user's email
        // is free: nobody can know it any more.
        func register(_ id: String, email: String) throws -> JSONValue {
            try System.exchange(
                [
                    body(
                        "eq-register-\(id)", "RegisterUser", actor: id,
                        ["userId": .string(id), "username": .string(id), "email": .string(email), "role": "AGENT"])
                ],
                endpoint: service.commands, secret: try service.secret(of: ServiceProcess.Keys.service), context: context)[0]
        }
        let taken = try register("eq-newcomer-1", email: "\(agent.uppercased())@agents.example.com")
        #expect(taken["error"]?["reason"] == "EMAIL_TAKEN", "\(taken)")
        #expect(try register("eq-newcomer-2", email: "\(other)@agents.example.com")["ok"] == true)
        #expect(service.stop() == 0)
        service = try ServiceProcess(dataDirectory: data)
        let stillTaken = try register("eq-newcomer-3", email: "\(agent)@agents.example.com")
        #expect(stillTaken["error"]?["reason"] == "EMAIL_TAKEN", "\(stillTaken)")
        let takenByNewcomer = try register("eq-newcomer-4", email: "\(other)@AGENTS.example.com")
        #expect(takenByNewcomer["error"]?["reason"] == "EMAIL_TAKEN", "\(takenByNewcomer)")
        #expect(try strataOutput(["verify"], data: data).contains("intact"))
    }

    /// A subject id of up to 64 characters gets a command id within the 64 allowed.
    @Test func forgetErasesASubjectWithALongId() throws {
        let data = try ChildProcess.temporaryDirectory("strata-erasure-long-id")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        let user = "long-" + String(repeating: "0123456789", count: 5) + "abcde"
        try #require(user.count == 60)
        try System.send(
            [
                body(
                    "register-long", "RegisterUser", actor: user,
                    ["userId": .string(user), "username": "longid", "email": "long@example.com", "role": "AGENT"])
            ],
            endpoint: service.commands, secret: try service.secret(of: ServiceProcess.Keys.service),
            context: try ZMQContext())

        let erasure = try forget(user, kind: "USER", data: data, commands: service.commands)
        #expect(erasure.exitCode == 0, "\(erasure.reply)")
        #expect(erasure.reply["events"]?.arrayValue?.first?["stream"] == .string("user-\(user)"))
        let id = try #require(erasure.reply["id"]?.stringValue)
        #expect(id.count <= 64 && id.hasPrefix("forget-long-0123"), "\(id)")
        #expect(service.stop() == 0)
    }
}

extension ServiceProcess {
    /// A key's secret from the key file of `data`.
    static func secret(of keyId: String, in data: URL) throws -> [UInt8] {
        let keys = try KeyFile(json: try Data(contentsOf: data.appendingPathComponent("keys.json")))
        guard let key = keys.key(keyId) else { throw ServiceProcessError("no key \(keyId)") }
        return key.secret
    }
}
