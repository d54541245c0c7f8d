import EventStore
import Foundation
import StrataCore
import StrataSQLite

/// `strata bench SCENARIO`: measurements, not tests. Each figure is taken several
/// times in one run (min / median / max) beside its reference ceiling, because only
/// ratios measured side by side mean anything on a shared machine.
enum BenchCommand {
    static let scenarios = [
        "append", BenchCommandsScenario.name, BenchLatencyScenario.name, BenchProjectionsScenario.lag,
        BenchProjectionsScenario.rebuild, BenchHistoryScenario.replay, BenchHistoryScenario.verify,
        BenchMemoryScenario.name,
    ]

    /// The options that set what a scenario measures, in the order help lists them.
    static let sizeOptions = ["events", "loans", "peer", "metrics", "rate", "seconds"]

    /// Those each scenario takes (all take --repeat, --dir and --json); any other is refused:
    /// ignored, it gave figures of another size than asked for, without a word.
    static let scenarioOptions: [String: Set<String>] = [
        "append": ["events"], BenchCommandsScenario.name: ["loans", "peer", "metrics"],
        BenchLatencyScenario.name: ["rate", "seconds"], BenchProjectionsScenario.lag: ["loans", "rate", "seconds"],
        BenchProjectionsScenario.rebuild: ["loans"], BenchHistoryScenario.replay: ["events"],
        BenchHistoryScenario.verify: ["events"], BenchMemoryScenario.name: ["events", "loans"],
    ]

    static let spec = CommandSpec(
        ["bench"], summary: "Run a benchmark scenario and print its figures.",
        arguments: [
            ArgumentSpec("SCENARIO", help: "append, commands, latency, lag, rebuild, replay, verify or memory")
        ],
        options: [
            OptionSpec(
                "events", value: "N",
                help: "append, replay, verify, memory: events per run (default 100000; replay, verify 1000000; "
                    + "memory 5000000)."),
            OptionSpec("repeat", value: "R", help: "Runs per figure (default 3)."),
            OptionSpec("dir", value: "DIR", help: "Where to put scratch stores (default: a new temporary directory)."),
            OptionSpec("json", help: "One JSON line per figure instead of a table."),
        ] + BenchCommandsScenario.options + BenchLatencyScenario.options,
        discussion: """
            append: events/s through the store API (group commits of 100 commands of one event, and
            one command of 100 events; ≈ 300-byte payloads; WAL, synchronous=FULL, chain hashing on),
            beside the raw SQLite ceiling measured in the same run (1000 rows per transaction, same
            row size, same unique (stream, version) index, same durability settings and page size),
            and raw SQLite at the store's own commit size (100 rows per transaction), which separates
            the store's own cost from the cost of committing (one fsync per transaction).

            append, commands, latency, lag and rebuild also say where the CPU went while they were
            measured, over all runs: the process's share of the machine's cores, and each thread's share
            of one core, by the name the system knows it by (digits as N; `bench clients` is the
            benchmark's own clients, `other threads` the threads that ended during the run, such as a
            store's chain thread in append, and those under 1%), then how long each thread was ready to
            run but waited for a core. A figure short of its target with one thread near a whole core,
            on it or waiting for it, is bound by that thread; with the process near every core, by the
            machine. JSON: a `cpu` member on each figure.
            """ + "\n\n" + BenchCommandsScenario.discussion + "\n\n" + BenchLatencyScenario.discussion + "\n\n"
            + BenchProjectionsScenario.discussion + "\n\n" + BenchHistoryScenario.discussion + "\n\n"
            + BenchMemoryScenario.discussion)

    struct Figure {
        let scenario: String
        let measure: String
        let unit: String
        let samples: [Double]
        let ceiling: Double?
        /// Raw SQLite at the same commit size, when the figure has one.
        let sameSizeRaw: Double?
        /// Where the CPU went while it was measured, over all its runs (`BenchCPU`).
        var cpu: BenchCPU? = nil

        var sorted: [Double] { samples.sorted() }
        var median: Double { BenchCommand.median(samples) }

        var json: JSONValue {
            var members: [String: JSONValue] = [
                "scenario": .string(scenario), "measure": .string(measure), "unit": .string(unit),
                "runs": .integer(Int64(samples.count)), "min": .integer(Int64(sorted.first!)),
                "median": .integer(Int64(median)), "max": .integer(Int64(sorted.last!)),
            ]
            if let ceiling {
                members["ceilingMedian"] = .integer(Int64(ceiling))
                members["ratioPercent"] = .integer(Int64((median / ceiling * 100).rounded()))
            }
            if let sameSizeRaw {
                members["sameSizeRawMedian"] = .integer(Int64(sameSizeRaw))
                members["sameSizeRatioPercent"] = .integer(Int64((median / sameSizeRaw * 100).rounded()))
            }
            if let cpu { members["cpu"] = cpu.json }
            return .object(members)
        }
    }

    static let subcommand = Subcommand(spec: spec) { arguments, _ in
        let scenario = arguments.positionals[0]
        guard scenarios.contains(scenario) else {
            throw UsageError("unknown scenario '\(scenario)' (known: \(scenarios.joined(separator: ", ")))")
        }
        let takes = scenarioOptions[scenario, default: []]
        let given = sizeOptions.filter { arguments.value($0) != nil || arguments.flag($0) }
        for option in given where !takes.contains(option) {
            let named = sizeOptions.filter(takes.contains).map { "--\($0)" }
            let list =
                named.count < 2 ? named.joined() : named.dropLast().joined(separator: ", ") + " and " + named.last!
            throw UsageError("--\(option) is not for the \(scenario) scenario, which takes \(list)")
        }
        let events = Int(try arguments.integer("events", in: 100...100_000_000) ?? 100_000)
        let runs = Int(try arguments.integer("repeat", in: 1...100) ?? 3)
        // A scratch directory of our own goes however the run ends, also at SIGINT, SIGTERM or
        // SIGHUP (exit 128 + the signal): a long run fills it with gigabytes of stores. The
        // signals are blocked before any thread starts, for `ScratchDirectory` to take them.
        var scratch: ScratchDirectory?
        let directory: String
        if let given = arguments.value("dir") {
            directory = try scratchDirectory(given)
        } else {
            ShutdownSignals.blockAtStart()
            let made = try ScratchDirectory("strata-bench", stopping: BenchChildProcess.stopAll)
            scratch = made
            directory = made.path
        }
        defer { scratch?.remove() }
        if scenario == BenchCommandsScenario.name {
            return try BenchCommandsScenario.run(arguments, directory: directory, runs: runs)
        }
        if scenario == BenchLatencyScenario.name {
            return try BenchLatencyScenario.run(arguments, directory: directory, runs: runs)
        }
        if scenario == BenchProjectionsScenario.lag || scenario == BenchProjectionsScenario.rebuild {
            return try BenchProjectionsScenario.run(scenario, arguments, directory: directory, runs: runs)
        }
        if scenario == BenchHistoryScenario.replay || scenario == BenchHistoryScenario.verify {
            return try BenchHistoryScenario.run(scenario, arguments, directory: directory, runs: runs)
        }
        if scenario == BenchMemoryScenario.name {
            return try BenchMemoryScenario.run(arguments, directory: directory, runs: runs)
        }

        // Each measure's rates over the runs, and where the CPU went while they were taken.
        var rates = Array(repeating: [Double](), count: 4)
        var cpu = Array(repeating: BenchCPU(), count: 4)
        func measure(_ index: Int, _ rate: () throws -> Double) rethrows {
            let start = BenchCPU.Sample.now()
            rates[index].append(try rate())
            cpu[index].add(BenchCPU(from: start, to: .now()))
        }
        let commandBatches = makeCommandBatches(events: events, eventsPerCommand: 1)
        let eventBatches = makeCommandBatches(events: events, eventsPerCommand: 100)
        for run in 0..<runs {
            try measure(0) { try rawInsertRate(events: events, rowsPerTransaction: 1000, path: "\(directory)/raw-\(run).db") }
            try measure(1) { try rawInsertRate(events: events, rowsPerTransaction: 100, path: "\(directory)/raw100-\(run).db") }
            try measure(2) { try storeAppendRate(commandBatches, path: "\(directory)/store1-\(run).db") }
            try measure(3) { try storeAppendRate(eventBatches, path: "\(directory)/store100-\(run).db") }
        }
        let rawMedian = median(rates[0])
        let raw100Median = median(rates[1])
        let figures = [
            Figure(
                scenario: "append", measure: "raw SQLite insert ceiling, 1000 rows/txn", unit: "rows/s", samples: rates[0],
                ceiling: nil, sameSizeRaw: nil, cpu: cpu[0]),
            Figure(
                scenario: "append", measure: "raw SQLite insert, 100 rows/txn", unit: "rows/s", samples: rates[1],
                ceiling: rawMedian, sameSizeRaw: nil, cpu: cpu[1]),
            Figure(
                scenario: "append", measure: "store append, 100 commands × 1 event per call", unit: "events/s",
                samples: rates[2], ceiling: rawMedian, sameSizeRaw: raw100Median, cpu: cpu[2]),
            Figure(
                scenario: "append", measure: "store append, 1 command × 100 events per call", unit: "events/s",
                samples: rates[3], ceiling: rawMedian, sameSizeRaw: raw100Median, cpu: cpu[3]),
        ]
        if arguments.flag("json") {
            for figure in figures { printLine(CanonicalJSON.string(figure.json)) }
        } else {
            printTable(figures, events: events, runs: runs)
        }
        return 0
    }

    static func scratchDirectory(_ path: String) throws -> String {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw CommandFailure.environment("cannot create \(path): \(error.localizedDescription)")
        }
        return path
    }

    /// ≈ 300 bytes of canonical event data.
    static func payload(_ n: Int) -> JSONValue {
        [
            "loanId": .string("L\(n)"), "paymentId": .string("P\(n)"), "amountCents": .integer(Int64(52_261 + n % 1000)),
            "paidOn": "2026-11-20", "receivedBy": "agent-7", "type": "REGULAR",
            "allocation": ["penaltyCents": 0, "interestCents": 15_000, "principalCents": .integer(Int64(37_261 + n % 1000))],
            "notes": .string(String(repeating: "n", count: 120)),
        ]
    }

    /// The input of the store runs, built before timing: calls of 100 commands × 1 event,
    /// or of 1 command × 100 events.
    static func makeCommandBatches(events: Int, eventsPerCommand: Int) -> [[CommandWrite]] {
        let commandsPerCall = 100 / eventsPerCommand
        var batches: [[CommandWrite]] = []
        var n = 0
        while n < events {
            var batch: [CommandWrite] = []
            for _ in 0..<commandsPerCall where n < events {
                let first = n
                var newEvents: [NewEvent] = []
                for _ in 0..<eventsPerCommand where n < events {
                    newEvents.append(
                        try! NewEvent(
                            stream: StreamName(category: "loan", id: "L\(n / 3)")!, type: "PaymentReceived", schemaVersion: 2,
                            data: payload(n)))
                    n += 1
                }
                batch.append(
                    try! CommandWrite(
                        commandId: "bench-\(first)", bodyDigest: HashChain.sha256(Array("bench-\(first)".utf8)),
                        actor: "bench", commandType: "ReceivePayment", decision: .append(newEvents, expectations: [:])))
            }
            batches.append(batch)
        }
        return batches
    }

    static func storeAppendRate(_ batches: [[CommandWrite]], path: String) throws -> Double {
        let store = try SQLiteEventStore(path: path)
        let events = batches.reduce(0) { total, batch in
            total + batch.reduce(0) { sum, command in
                if case .append(let events, _) = command.decision { return sum + events.count }
                return sum
            }
        }
        let start = ContinuousClock.now
        for batch in batches { _ = try store.append(batch) }
        return Double(events) / seconds(since: start)
    }

    /// The physical ceiling: plain inserts of the same shape, no journal, no hashing.
    static func rawInsertRate(events: Int, rowsPerTransaction: Int, path: String) throws -> Double {
        let c = try SQLiteConnection(path: path, mode: .readWrite)
        try c.usePageSizeForNewFile()  // as the store's own file
        _ = try c.scalarText("PRAGMA journal_mode=WAL")
        try c.execute("PRAGMA synchronous=FULL")
        try c.execute(
            """
            CREATE TABLE events (position INTEGER PRIMARY KEY, stream TEXT NOT NULL, version INTEGER NOT NULL,
              type TEXT NOT NULL, data TEXT NOT NULL, hash TEXT NOT NULL, UNIQUE (stream, version))
            """)
        let rows: [[SQLiteValue]] = (0..<events).map { n in
            [
                .integer(Int64(n + 1)), .text("loan-L\(n / 3)"), .integer(Int64(n % 3 + 1)), .text("PaymentReceived"),
                .text(CanonicalJSON.string(payload(n))), .text(String(repeating: "ab", count: 32)),
            ]
        }
        let start = ContinuousClock.now
        var n = 0
        while n < events {
            try c.transaction {
                let insert = try c.statement("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)")
                for row in rows[n..<min(n + rowsPerTransaction, events)] { try insert.run(row) }
            }
            n += rowsPerTransaction
        }
        return Double(events) / seconds(since: start)
    }

    /// The middle value, or over an even number the mean of the middle two: the upper one
    /// alone made the median of two runs their maximum.
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        seconds(between: start, and: .now)
    }

    static func seconds(between start: ContinuousClock.Instant, and end: ContinuousClock.Instant) -> Double {
        (end - start) / .seconds(1)
    }

    static func printTable(_ figures: [Figure], events: Int, runs: Int) {
        printLine("strata bench append — \(events) events per run, \(runs) runs; figures are min / median / max")
        let rows = figures.map { f -> [String] in
            [
                f.measure, f.unit, format(f.sorted.first!), format(f.median), format(f.sorted.last!),
                f.ceiling.map { "\(Int((f.median / $0 * 100).rounded()))% of ceiling" } ?? "—",
                f.sameSizeRaw.map { "\(Int((f.median / $0 * 100).rounded()))% of raw at 100/txn" } ?? "",
            ]
        }
        printColumns(["measure", "unit", "min", "median", "max", "ratio", ""], rows)
        printCPU(figures.compactMap { figure in figure.cpu.map { (figure.measure, $0) } })
    }

    /// The lines a table ends with: where the CPU went in each measurement, in order.
    static func printCPU(_ measurements: [(label: String, cpu: BenchCPU)]) {
        for (label, cpu) in measurements { printLine(cpu.line(label)) }
    }

    /// Rows under a header, each column as wide as its widest cell.
    static func printColumns(_ header: [String], _ rows: [[String]]) {
        printAligned([header] + rows)
    }

    static func format(_ value: Double) -> String {
        let n = Int(value.rounded())
        var digits = Array(String(n))
        var i = digits.count - 3
        while i > 0 {
            digits.insert(",", at: i)
            i -= 3
        }
        return String(digits)
    }
}
