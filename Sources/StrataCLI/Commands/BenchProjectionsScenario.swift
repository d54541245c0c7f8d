import EventStore
import Foundation
import ProjectorRuntime
import Projections
import StrataCore
import Workloads

/// `strata bench lag` and `strata bench rebuild`: the projector path, measured with the
/// real command service and the real projector engine in this process.
enum BenchProjectionsScenario {
    static let lag = "lag"
    static let rebuild = "rebuild"

    static let lagTargetMilliseconds = 100.0
    static let rebuildTarget = 100_000.0

    static let discussion = """
        lag: projection lag, from an event's recordedAt (when its group commit was decided, just
        before the commit) to the commit of the read-model batch that applies it (readmodels.db,
        every read model), with the command
        service and a projector in this process on loopback. Measured twice: while --rate
        commands/s (default 10000, the target's load) are sent steadily for --seconds, and while
        --loans loans are sent at full speed by 16 pipelined clients. p50 / p99 / max in
        milliseconds (recordedAt has millisecond resolution). The steady clients keep to their
        schedule to the millisecond (latency's to 0.1 ms), waking far less often.

        rebuild: events/s rebuilding readmodels.db and audit.db from position 0, reading the store
        file directly, on a store filled through the service with --loans loans and as many
        invoices (setup, request, approve, pay; create, pay).
        """

    static func run(_ scenario: String, _ arguments: ParsedArguments, directory: String, runs: Int) throws -> Int32 {
        let loans = Int(try arguments.integer("loans", in: 1...10_000_000) ?? 10_000)
        let rate = Int(try arguments.integer("rate", in: 1...1_000_000) ?? 10_000)
        let seconds = Int(try arguments.integer("seconds", in: 1...3600) ?? 5)
        let keep = arguments.value("dir") != nil
        let workload = LendingWorkload(admin: "bench-admin", prefix: "b", today: Timestamp.now().date)
        let setup = BenchCommandsScenario.Plan(units: [workload.setup()], clients: 1)
        let clients = BenchCommandsScenario.clients

        var figures: [BenchCommand.Figure] = []
        // Where the CPU went in each measurement, for the figures it gave and the table's end.
        var cpu: [(label: String, cpu: BenchCPU)] = []
        if scenario == lag {
            let paced = BenchCommandsScenario.Plan(
                units: (0..<((rate * seconds + 2) / 3)).map { workload.loan($0) }, clients: BenchCommandsScenario.latencyClients)
            let flood = BenchCommandsScenario.Plan(units: (0..<loans).map { workload.loan(paced.commands + $0) }, clients: clients)
            var steady: [[Double]] = []
            var full: [[Double]] = []
            var steadyCPU = BenchCPU()
            var fullCPU = BenchCPU()
            for run in 0..<runs {
                let path = "\(directory)/lag-\(run).db"
                try BenchCommandsScenario.withService(at: path, admin: workload.admin, keep: keep) { service in
                    try service.send(setup)
                    let lags = Locked(Lags())
                    let projector = try startProjector(service, path: "\(directory)/lag-readmodels-\(run).db", lags: lags)
                    defer {
                        projector.stop()
                        _ = projector.wait()
                    }
                    let store = try SQLiteEventStore(readingAt: path)
                    try waitForProjector(lags, store: store)
                    // From the first send until the projector has applied the last event.
                    var start = BenchCPU.Sample.now()
                    let (_, pacedCPU) = try service.latencies(paced, rate: rate, pacing: .millisecond)
                    steady.append(try waitForProjector(lags, store: store))
                    steadyCPU.add(BenchCPU(from: start, to: .now(), clientSeconds: pacedCPU.clientSeconds))
                    start = BenchCPU.Sample.now()
                    let (_, floodCPU) = try service.throughput(flood)
                    full.append(try waitForProjector(lags, store: store))
                    fullCPU.add(BenchCPU(from: start, to: .now(), clientSeconds: floodCPU.clientSeconds))
                }
                if !keep { for suffix in ["", "-wal", "-shm", "-lock"] { unlink("\(directory)/lag-readmodels-\(run).db" + suffix) } }
            }
            cpu = [("at \(rate) commands/s", steadyCPU), ("at full speed, \(clients) clients", fullCPU)]
            for ((label, use), samples) in zip(cpu, [steady, full]) {
                for (name, p) in [("p50", 0.5), ("p99", 0.99), ("max", 1.0)] {
                    let percentiles = samples.map { BenchCommandsScenario.percentile($0, p) }
                    figures.append(figure(lag, "projection lag \(name) \(label)", "ms", percentiles, cpu: use))
                }
            }
        } else {
            let units = (0..<loans).map { workload.loan($0) } + (0..<loans).map { workload.invoice($0) }
            let fill = BenchCommandsScenario.Plan(units: units, clients: clients)
            var readModels: [Double] = []
            var audit: [Double] = []
            var readModelsCPU = BenchCPU()
            var auditCPU = BenchCPU()
            var events: Int64 = 0
            for run in 0..<runs {
                let path = "\(directory)/rebuild-\(run).db"
                try BenchCommandsScenario.withService(at: path, admin: workload.admin, keep: keep) { service in
                    try service.send(setup)
                    _ = try service.throughput(fill)
                    let store = try SQLiteEventStore(readingAt: path)
                    for (name, projections) in [("readmodels", ReadModels.all), ("audit", ReadModels.audit)] {
                        let output = "\(directory)/rebuild-\(name)-\(run).db"
                        let start = BenchCPU.Sample.now()
                        let result = try Rebuild.run(
                            name: name, projections: projections, from: StoreHistory(store: store), into: output,
                            opener: service.opener)
                        if let stop = result.stop { throw CommandFailure.problem("the rebuild of \(name) stopped: \(stop)") }
                        events = result.events
                        let use = BenchCPU(from: start, to: .now())
                        if name == "audit" {
                            audit.append(result.eventsPerSecond)
                            auditCPU.add(use)
                        } else {
                            readModels.append(result.eventsPerSecond)
                            readModelsCPU.add(use)
                        }
                        if !keep { RebuildOutput.remove(output) }
                    }
                }
            }
            cpu = [("rebuild readmodels.db", readModelsCPU), ("rebuild audit.db", auditCPU)]
            figures = [
                figure(rebuild, "\(cpu[0].label), \(events) events", "events/s", readModels, cpu: readModelsCPU),
                figure(rebuild, "\(cpu[1].label), \(events) events", "events/s", audit, cpu: auditCPU),
            ]
        }

        if arguments.flag("json") {
            for figure in figures { printLine(CanonicalJSON.string(figure.json)) }
        } else {
            printLine("strata bench \(scenario) — \(runs) runs; figures are min / median / max")
            let target = scenario == lag ? "target p99 < \(Int(lagTargetMilliseconds)) ms" : "target ≥ 100,000 events/s"
            BenchCommand.printColumns(
                ["measure", "unit", "min", "median", "max"],
                figures.map { f in
                    [f.measure, f.unit, BenchCommand.format(f.sorted.first!), BenchCommand.format(f.median),
                        BenchCommand.format(f.sorted.last!)]
                })
            BenchCommand.printCPU(cpu)
            printLine("(\(target))")
        }
        return 0
    }

    private static func figure(
        _ scenario: String, _ measure: String, _ unit: String, _ samples: [Double], cpu: BenchCPU
    ) -> BenchCommand.Figure {
        BenchCommand.Figure(
            scenario: scenario, measure: measure, unit: unit, samples: samples, ceiling: nil, sameSizeRaw: nil,
            cpu: cpu)
    }

    /// Each applied event's lag in ms, and the last position applied.
    struct Lags: Sendable {
        var milliseconds: [Double] = []
        var position: Int64 = 0
    }

    /// A projector of every read model on the service's bus, recording each event's lag.
    private static func startProjector(
        _ service: BenchCommandsScenario.Service, path: String, lags: Locked<Lags>
    ) throws -> Projector {
        let key = KeyFile.Key(id: service.keyId, secret: service.secret, scopes: [.history])
        var settings = Projector.Settings(
            name: "readmodels", databasePath: path, eventsEndpoint: service.server.endpoints.events,
            historyEndpoint: service.server.endpoints.history, key: key)
        settings.opener = service.opener
        do throws(ProjectorError) {
            return try Projector.start(
                settings, projections: ReadModels.all, logger: Logger(label: "bench-project", minimumLevel: .warning)
            ) { commit in
                let committed = commit.committedAt.millisecondsSinceEpoch
                let batch = commit.events.compactMap { event in
                    Timestamp(event.recordedAt).map { Double(committed - $0.millisecondsSinceEpoch) }
                }
                lags.withLock {
                    $0.milliseconds += batch
                    $0.position = max($0.position, commit.events.last?.position ?? 0)
                }
            }
        } catch {
            throw CommandFailure.environment("cannot start the projector: \(error.message)")
        }
    }

    /// Waits until the projector has applied everything the store holds; returns the lags
    /// recorded since the last call.
    @discardableResult
    private static func waitForProjector(_ lags: Locked<Lags>, store: SQLiteEventStore) throws -> [Double] {
        let head = try store.head()
        let deadline = ContinuousClock.now + .seconds(300)
        while lags.withLock({ $0.position }) < head {
            guard ContinuousClock.now < deadline else {
                throw CommandFailure.problem("the projector did not reach position \(head) within 300 s")
            }
            usleep(20_000)
        }
        return lags.withLock { lags in
            defer { lags.milliseconds = [] }
            return lags.milliseconds
        }
    }
}
