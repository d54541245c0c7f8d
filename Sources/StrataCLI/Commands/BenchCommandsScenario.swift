import Bus
import CSodium
import CommandService
import EventStore
import Events
import Foundation
import StrataCore
import SubjectKeys
import Synchronization
import Workloads

/// `strata bench commands`: signed commands end to end — ZeroMQ on loopback, the real
/// command service in this process, the real SQLite store (WAL, synchronous=FULL) in a
/// scratch directory, every reply sent only once its command is durable.
///
/// Each run gets a fresh store and a fresh service: the first admin is written straight
/// into the store (as `strata admin bootstrap` does), the store is closed so the service
/// can take the writer lock, and the workload's setup (agents, their approval, accounts)
/// is sent before anything is timed.
enum BenchCommandsScenario {
    static let name = "commands"

    /// Pipelined clients in the throughput runs, each a DEALER on its own thread.
    static let clients = 16
    /// Commands each throughput client sends ahead of their replies.
    static let window = 256
    /// Paced clients in the steady-rate runs (`latency`, `lag`), sharing the rate between them.
    static let latencyClients = 4
    /// How long a client waits without any reply before the run fails.
    static let replyTimeout: Duration = .seconds(60)

    static let throughputTarget = 50_000.0
    /// The lending loop is to run at least this many times as fast as the peer.
    static let peerTargetRatio = 10.0

    static let options = [
        OptionSpec(
            "loans", value: "N", help: "commands, lag, rebuild, memory: loans per run (default 10000; memory 2000)."),
        OptionSpec("peer", help: "commands: also run the Python eventsourcing peer after each run."),
        OptionSpec(
            "metrics", help: "commands: record metrics as serve --metrics-file does (written each second)."),
    ]

    static let discussion = """
        commands: signed commands end to end through ZeroMQ on loopback, the command service
        in-process on a fresh SQLite store per run (WAL, synchronous=FULL, durable before reply).
        \(clients) pipelined DEALER clients, one thread each, at most \(window) commands in flight each;
        the lending loop (setup, then per loan RequestLoan, ApproveLoan, ReceivePayment, loans split
        across clients), then a mix (even units a loan, odd units an invoice: CreateInvoice,
        RecordInvoicePayment). commands/s = accepted commands / wall time from the first send to the
        last reply. Any reply other than ok:true fails the benchmark (exit 1). --peer: after each run,
        the same lending loop (same loans, 3 business operations each) through the Python
        eventsourcing library on a durable SQLite file (bench/peers/eventsourcing-peer, which makes
        its own virtual environment with pip on first use), and the lending loop's median over the
        peer's (target ≥ \(Int(peerTargetRatio))×); a peer that cannot run is an error (exit 2).
        --metrics: the service records its metrics and writes them to the scratch directory every
        second, as `serve --metrics-file` would (to measure what they cost).
        """

    // MARK: - The scenario

    static func run(_ arguments: ParsedArguments, directory: String, runs: Int) throws -> Int32 {
        let loans = Int(try arguments.integer("loans", in: 1...10_000_000) ?? 10_000)
        let peer = arguments.flag("peer") ? try BenchPeer.locate() : nil
        let keepStores = arguments.value("dir") != nil
        let metricsFile = arguments.flag("metrics") ? "\(directory)/metrics.prom" : nil
        let workload = LendingWorkload(admin: "bench-admin", prefix: "b", today: Timestamp.now().date)

        // Every body is built and encoded before anything is timed.
        let lending = Plan(units: (0..<loans).map { workload.loan($0) }, clients: clients)
        let mix = Plan(
            units: (0..<loans).map { $0 % 2 == 0 ? workload.loan($0) : workload.invoice($0) }, clients: clients)
        let setup = Plan(units: [workload.setup()], clients: 1)

        var lendingRates: [Double] = []
        var mixRates: [Double] = []
        var lendingCPU = BenchCPU()
        var mixCPU = BenchCPU()
        var peerRuns: [BenchPeer.Run] = []
        for run in 0..<runs {
            for (plan, kind) in [(lending, "lending"), (mix, "mix")] {
                let (rate, cpu) = try withService(
                    at: "\(directory)/commands-\(kind)-\(run).db", admin: workload.admin, keep: keepStores,
                    metricsFile: metricsFile
                ) { service in
                    try service.send(setup)
                    return try service.throughput(plan)
                }
                if kind == "lending" {
                    lendingRates.append(rate)
                    lendingCPU.add(cpu)
                } else {
                    mixRates.append(rate)
                    mixCPU.add(cpu)
                }
            }
            if let peer { peerRuns.append(try peer.run(loans: loans, directory: directory)) }
        }

        let facts: [String: JSONValue] = [
            "clients": .integer(Int64(clients)), "window": .integer(Int64(window)),
            "target": .integer(Int64(throughputTarget)),
        ]
        var lendingFigure = figure("commands/s, lending loop", "commands/s", lendingRates)
        lendingFigure.cpu = lendingCPU
        var mixFigure = figure("commands/s, mix with invoices", "commands/s", mixRates)
        mixFigure.cpu = mixCPU
        var lendingFacts = facts.merging(["commands": .integer(Int64(lending.commands))]) { $1 }
        var figures: [(BenchCommand.Figure, [String: JSONValue])] = [
            (lendingFigure, lendingFacts),
            (mixFigure, facts.merging(["commands": .integer(Int64(mix.commands))]) { $1 }),
        ]
        var ratioPercent: Int64?
        if let first = peerRuns.first {
            let peerFigure = figure(
                "commands/s, lending loop, Python eventsourcing peer", "commands/s",
                peerRuns.map(\.operationsPerSecond))
            let percent = peerRatioPercent(lending: lendingFigure.median, peer: peerFigure.median)
            ratioPercent = percent
            lendingFacts["peerMedian"] = .integer(Int64(peerFigure.median))
            lendingFacts["peerRatioPercent"] = .integer(percent)
            lendingFacts["peerTargetRatioPercent"] = .integer(Int64(peerTargetRatio * 100))
            figures[0].1 = lendingFacts
            let events = BenchCommand.median(peerRuns.map(\.eventsPerSecond))
            figures.append(
                (
                    peerFigure,
                    [
                        "commands": .integer(first.operations), "events": .integer(first.events),
                        "eventsPerSecondMedian": .integer(Int64(events)),
                        "peer": .string("eventsourcing \(first.version)"), "journalMode": .string(first.journalMode),
                        "synchronous": .string(first.synchronous),
                    ]
                ))
        }

        if arguments.flag("json") {
            for (figure, facts) in figures {
                guard case .object(let members) = figure.json else { continue }
                printLine(CanonicalJSON.string(.object(members.merging(facts) { old, _ in old })))
            }
        } else {
            printLine(
                "strata bench commands — \(runs) runs; figures are min / median / max; "
                    + "every store WAL, synchronous=FULL")
            let count = { (n: Int) in BenchCommand.format(Double(n)) }
            printLine(
                "  \(clients) pipelined clients × \(window) in flight; lending \(count(lending.commands)) commands "
                    + "(\(count(loans)) loans), mix \(count(mix.commands)) commands")
            if let first = peerRuns.first {
                let events = BenchCommand.median(peerRuns.map(\.eventsPerSecond))
                printLine(
                    "  peer: Python eventsourcing \(first.version), SQLite \(first.journalMode.uppercased()), "
                        + "synchronous=\(first.synchronous), one transaction per command; "
                        + "\(BenchCommand.format(events)) events/s median")
            }
            printTable(figures.map(\.0), peerRatioPercent: ratioPercent)
            BenchCommand.printCPU([("lending loop", lendingCPU), ("mix with invoices", mixCPU)])
        }
        return 0
    }

    /// The lending loop's median over the peer's, in percent, from the integer medians the
    /// figures print, so that anyone can check it from the printed numbers.
    static func peerRatioPercent(lending: Double, peer: Double) -> Int64 {
        Int64((Double(Int64(lending)) / Double(max(1, Int64(peer))) * 100).rounded())
    }

    static func figure(_ measure: String, _ unit: String, _ samples: [Double]) -> BenchCommand.Figure {
        BenchCommand.Figure(
            scenario: name, measure: measure, unit: unit, samples: samples, ceiling: nil, sameSizeRaw: nil)
    }

    /// Nearest rank.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[max(0, min(sorted.count - 1, rank - 1))]
    }

    static func printTable(_ figures: [BenchCommand.Figure], peerRatioPercent: Int64?) {
        let rows = figures.enumerated().map { index, f -> [String] in
            var target = "\(Int((f.median / throughputTarget * 100).rounded()))% of 50 k/s target"
            if index == 0, let peerRatioPercent {
                target += "; \(String(format: "%.1f", Double(peerRatioPercent) / 100))× the peer (target ≥ "
                    + "\(Int(peerTargetRatio))×)"
            } else if index == 2 {
                target = "—"
            }
            return [
                f.measure, f.unit, BenchCommand.format(f.sorted.first!), BenchCommand.format(f.median),
                BenchCommand.format(f.sorted.last!), target,
            ]
        }
        BenchCommand.printColumns(["measure", "unit", "min", "median", "max", "target"], rows)
    }

    // MARK: - What the clients send

    /// Command bodies split across clients, encoded, with the tail each one's reply must
    /// have. A unit (a loan's three commands, an invoice's two) stays on one client, in
    /// order, since each command depends on the one before; units go round-robin.
    struct Plan: Sendable {
        struct Client: Sendable {
            var bodies: [[UInt8]] = []
            /// `"id":"<id>","ok":true}`: how an accepted reply ends in canonical JSON (its
            /// members sorted: duplicate, events, id, ok), and it names the command sent.
            var acceptedTails: [[UInt8]] = []
        }

        let clients: [Client]

        init(units: [[CommandBody]], clients count: Int) {
            var clients = Array(repeating: Client(), count: count)
            for (index, unit) in units.enumerated() {
                for body in unit {
                    clients[index % count].bodies.append(body.json)
                    clients[index % count].acceptedTails.append(
                        Array("\"id\":".utf8) + CanonicalJSON.bytes(.string(body.id)) + Array(",\"ok\":true}".utf8))
                }
            }
            self.clients = clients.filter { !$0.bodies.isEmpty }
        }

        var commands: Int { clients.reduce(0) { $0 + $1.bodies.count } }
    }

    static let acceptedHead = Array("{\"duplicate\":false,".utf8)

    /// Whether `reply` accepts, as new, the command whose tail is `tail`.
    static func isAccepted(_ reply: [UInt8], tail: [UInt8]) -> Bool {
        reply.count >= acceptedHead.count + tail.count && reply.starts(with: acceptedHead)
            && reply[(reply.count - tail.count)...].elementsEqual(tail)
    }

    static func refusal(_ reply: [UInt8]) -> String {
        "a command was not accepted: \(String(decoding: reply.prefix(600), as: UTF8.self))"
    }

    // MARK: - The service

    /// A fresh store with the first admin, the service on it, and the benchmark's key.
    struct Service {
        let server: CommandServer
        let keyId = "bench"
        let secret: [UInt8]
        let context: ZMQContext
        /// The service's key store, which projectors beside it open personal data with.
        let keysPath: String

        var endpoint: String { server.endpoints.commands }
        var opener: PersonalDataOpener { PersonalDataOpener(keyStorePath: keysPath) }

        /// Sends `plan` from its clients at full speed (each pipelined, `window` ahead);
        /// accepted commands per second, from the first send to the last reply, and where the
        /// CPU went meanwhile.
        func throughput(_ plan: Plan) throws -> (rate: Double, cpu: BenchCPU) {
            let (results, cpu) = try runClients(plan) { client, work, go in
                go()
                let first = ContinuousClock.now
                try pipeline(client, work)
                return Timing(start: first, end: ContinuousClock.now, latencies: [])
            }
            let start = results.map(\.start).min()!
            let end = results.map(\.end).max()!
            return (Double(plan.commands) / BenchCommand.seconds(between: start, and: end), cpu)
        }

        /// Sends `plan` one client after another, pipelined, untimed (the setup).
        func send(_ plan: Plan) throws {
            _ = try runClients(plan) { client, work, go in
                go()
                try pipeline(client, work)
                return Timing(start: .now, end: .now, latencies: [])
            }
        }

        /// Sends `plan` open-loop: command k of all (interleaved across clients) is sent
        /// at start + k / rate, whatever has been answered. Each command's latency in µs,
        /// from when it was due to be sent to when its reply was read, and where the CPU went.
        func latencies(
            _ plan: Plan, rate: Int, pacing: Pacing = .precise
        ) throws -> (latencies: [Double], cpu: BenchCPU) {
            let interval = Duration.seconds(1) / rate
            let count = plan.clients.count
            let start = Locked<ContinuousClock.Instant?>(nil)
            let (results, cpu) = try runClients(plan) { client, work, go in
                go()
                let t0 = start.withLock { value in
                    if value == nil { value = .now + .milliseconds(20) }
                    return value!
                }
                return try paced(client, work, pacing: pacing, due: { k in t0 + interval * (k * count + work.index) })
            }
            return (results.flatMap(\.latencies), cpu)
        }

        struct Work: Sendable {
            let index: Int
            let client: Plan.Client
        }

        struct Timing: Sendable {
            let start: ContinuousClock.Instant
            let end: ContinuousClock.Instant
            let latencies: [Double]
        }

        /// One thread per client of `plan`, each with its own DEALER; they start `body`
        /// together (after `go()`, once every client is connected), and the first error
        /// fails the run. The process's CPU is sampled as they start and once they have all
        /// ended; each client counts its own from `go()` on.
        func runClients(
            _ plan: Plan,
            _ body: @escaping @Sendable (SignedClient, Work, _ go: () -> Void) throws -> Timing
        ) throws -> (timings: [Timing], cpu: BenchCPU) {
            let outcomes = Locked<[Int: Result<Timing, any Error>]>([:])
            let clientSeconds = Locked(0.0)
            let ready = DispatchSemaphore(value: 0)
            let go = DispatchSemaphore(value: 0)
            let done = DispatchGroup()
            let (context, endpoint, keyId, secret) = (context, endpoint, keyId, secret)
            for (index, client) in plan.clients.enumerated() {
                done.enter()
                startThread(named: BenchCPU.clientPrefix + "\(index)") {
                    defer { done.leave() }
                    var signalled = false
                    var started = 0.0
                    let outcome: Result<Timing, any Error>
                    do {
                        let socket = try SignedClient(context, endpoint: endpoint, keyId: keyId, secret: secret)
                        defer { socket.close() }
                        outcome = .success(
                            try body(socket, Work(index: index, client: client)) {
                                signalled = true
                                ready.signal()
                                go.wait()
                                started = BenchCPU.threadCPUSeconds()
                            })
                    } catch {
                        outcome = .failure(error)
                    }
                    if signalled {
                        let used = BenchCPU.threadCPUSeconds() - started
                        clientSeconds.withLock { $0 += used }
                    } else {
                        ready.signal()
                        go.wait()
                    }
                    outcomes.withLock { $0[index] = outcome }
                }
            }
            for _ in plan.clients { ready.wait() }
            let before = BenchCPU.Sample.now()
            for _ in plan.clients { go.signal() }
            done.wait()
            let cpu = BenchCPU(from: before, to: .now(), clientSeconds: clientSeconds.withLock { $0 })
            let timings = try outcomes.withLock { outcomes in
                try (0..<plan.clients.count).map { try outcomes[$0]!.get() }
            }
            return (timings, cpu)
        }
    }

    /// Sends every body of `work`, at most `window` ahead of the replies, and checks each
    /// reply as it comes.
    static func pipeline(_ client: SignedClient, _ work: Service.Work) throws {
        let bodies = work.client.bodies
        let tails = work.client.acceptedTails
        var sent = 0
        var answered = 0
        while answered < bodies.count {
            while sent < bodies.count && sent - answered < window {
                try client.send(bodies[sent])
                sent += 1
            }
            guard var frames = try client.socket.receive(wait: false) ?? awaitReply(client) else {
                throw CommandFailure.problem(
                    "no reply within \(replyTimeout) (\(answered) of \(bodies.count) answered on one client)")
            }
            while true {
                let reply = frames.last ?? []
                guard isAccepted(reply, tail: tails[answered]) else { throw CommandFailure.problem(refusal(reply)) }
                answered += 1
                guard let next = try client.socket.receive(wait: false) else { break }
                frames = next
            }
        }
    }

    static func awaitReply(_ client: SignedClient) throws -> [[UInt8]]? {
        let timeout = Int(replyTimeout.components.seconds) * 1000
        guard try !zmqPollReadable([client.socket], timeoutMilliseconds: timeout).isEmpty else { return nil }
        return try client.socket.receive(wait: false)
    }

    /// How closely a paced client keeps to its schedule.
    enum Pacing {
        /// Sends within ≈ 0.1 ms of when they are due, and replies read as closely, by
        /// sleeping in steps of at most 0.1 ms: what a latency taken from the due time needs.
        case precise
        /// Sends and reads to the millisecond, waiting in the socket's poll: the same rate
        /// with a fraction of the wake-ups, for runs that measure something other than the
        /// clients' timing (`lag`), so that the clients leave the cores to what is measured.
        case millisecond
    }

    /// Sends each body of `work` when it is due, reading replies in between, as closely as
    /// `pacing` says.
    static func paced(
        _ client: SignedClient, _ work: Service.Work, pacing: Pacing = .precise, due: (Int) -> ContinuousClock.Instant
    ) throws -> Service.Timing {
        let bodies = work.client.bodies
        let tails = work.client.acceptedTails
        var latencies: [Double] = []
        latencies.reserveCapacity(bodies.count)
        var sent = 0
        var lastProgress = ContinuousClock.now
        while latencies.count < bodies.count {
            var now = ContinuousClock.now
            while sent < bodies.count && due(sent) <= now {
                try client.send(bodies[sent])
                sent += 1
            }
            while let frames = try client.socket.receive(wait: false) {
                now = ContinuousClock.now
                let reply = frames.last ?? []
                guard isAccepted(reply, tail: tails[latencies.count]) else {
                    throw CommandFailure.problem(refusal(reply))
                }
                latencies.append((now - due(latencies.count)) / .microseconds(1))
                lastProgress = now
            }
            if latencies.count == bodies.count { break }
            now = ContinuousClock.now
            if now - lastProgress > replyTimeout {
                throw CommandFailure.problem(
                    "no reply within \(replyTimeout) (\(latencies.count) of \(bodies.count) answered on one client)")
            }
            let untilNext = sent < bodies.count ? due(sent) - now : .milliseconds(100)
            if untilNext >= .milliseconds(1) || (pacing == .millisecond && untilNext > .zero) {
                let milliseconds = max(1, Int(untilNext / .milliseconds(1)))
                _ = try zmqPollReadable([client.socket], timeoutMilliseconds: milliseconds)
            } else if untilNext > .zero {
                usleep(UInt32(min(100, max(1, untilNext / .microseconds(1)))))
            }
        }
        return Service.Timing(start: due(0), end: ContinuousClock.now, latencies: latencies)
    }

    /// Runs `body` against a fresh service on a new store at `path`, then stops it.
    ///
    /// Unless `keep`, the run's store files are removed afterwards, so that repeated runs
    /// do not fill the disk before the scratch directory goes.
    static func withService<T>(
        at path: String, admin: String, keep: Bool, metricsFile: String? = nil, _ body: (Service) throws -> T
    ) throws -> T {
        let keysPath = path + ".subject-keys"
        defer {
            if !keep {
                for suffix in ["", "-wal", "-shm", "-lock"] {
                    unlink(path + suffix)
                    unlink(keysPath + suffix)
                }
            }
        }
        let secret = try KeysCommand.randomSecret()
        try bootstrapAdmin(admin, storePath: path, keysPath: keysPath)
        var keys = KeyFile()
        try keys.add(KeyFile.Key(id: "bench", secret: secret, scopes: [.commands, .history]))
        let any = "tcp://127.0.0.1:*"
        var settings = CommandServer.Settings(
            storePath: path, keys: keys, commandsEndpoint: any, eventsEndpoint: any, historyEndpoint: any)
        settings.subjectKeysPath = keysPath
        let logger = Logger(label: "bench-serve", minimumLevel: .warning)
        let observability = Observability(
            metricsFile: metricsFile, metricsIntervalSeconds: 1, logLevel: logger.minimumLevel)
        let registry = observability.registry(process: "serve")
        settings.metrics = registry.map(ServiceMetrics.init)
        let server: CommandServer
        do throws(ServerError) {
            server = try CommandServer.start(settings, logger: logger)
        } catch {
            throw CommandFailure.environment("cannot start the command service: \(error.message)")
        }
        let metrics: MetricsFile?
        do {
            metrics = try observability.startMetricsFile(registry, logger: logger)
        } catch {
            server.stop()
            server.wait()
            throw error
        }
        defer { metrics?.stop() }
        let context = try ZMQContext()
        let result: Result<T, any Error>
        do {
            result = .success(try body(Service(server: server, secret: secret, context: context, keysPath: keysPath)))
        } catch {
            result = .failure(error)
        }
        server.stop()
        if let failure = server.wait() {
            throw CommandFailure.problem("the command service failed: \(failure)")
        }
        return try result.get()
    }

    /// What `strata admin bootstrap` does, on a store closed again on return (its deinit
    /// releases the writer lock), so the service can open it.
    static func bootstrapAdmin(_ id: String, storePath: String, keysPath: String) throws {
        let store: SQLiteEventStore
        do {
            store = try SQLiteEventStore(path: storePath)
        } catch {
            throw CommandFailure.environment("cannot create the store \(storePath): \(error)")
        }
        let result = try AdminBootstrapCommand.registerAdmin(
            in: store, sealer: AdminBootstrapCommand.openSealer(keysPath), id: id, username: id,
            email: "\(id)@bench.example.com")
        guard case .accepted = result.outcome else {
            throw CommandFailure.environment("cannot register the admin in \(storePath)")
        }
    }
}

/// A value shared between client threads.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try mutex.withLock { try body(&$0) }
    }
}
