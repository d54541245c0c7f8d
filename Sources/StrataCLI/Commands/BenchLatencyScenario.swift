import Foundation
import StrataCore
import Workloads

/// `strata bench latency`: how long one command waits for its durable reply when the
/// service is not saturated — clients paced open-loop at a steady rate, so a slow reply
/// never slows the sends behind it and queueing shows up in the tail instead of hiding.
enum BenchLatencyScenario {
    static let name = "latency"

    static let p99TargetMicroseconds = 5_000.0

    static let options = [
        OptionSpec("rate", value: "N", help: "latency, lag: commands/s in the steady run (default 2000; lag 10000)."),
        OptionSpec("seconds", value: "S", help: "latency, lag: length of the steady run (default 5)."),
    ]

    static let percentiles: [(name: String, p: Double)] = [("p50", 0.5), ("p99", 0.99), ("p999", 0.999), ("max", 1)]

    static let discussion = """
        latency: signed commands end to end as for commands, on a fresh store per run, sent
        open-loop by \(BenchCommandsScenario.latencyClients) paced clients at --rate commands/s between
        them for --seconds (lending loops: RequestLoan, ApproveLoan, ReceivePayment); each
        command's time from its scheduled send to its reply, as p50 / p99 / p999 / max (nearest
        rank; target p99 < 5 ms). Any reply other than ok:true fails the benchmark (exit 1).
        """

    static func run(_ arguments: ParsedArguments, directory: String, runs: Int) throws -> Int32 {
        let rate = Int(try arguments.integer("rate", in: 1...1_000_000) ?? 2000)
        let seconds = Int(try arguments.integer("seconds", in: 1...3600) ?? 5)
        let keepStores = arguments.value("dir") != nil
        let workload = LendingWorkload(admin: "bench-admin", prefix: "b", today: Timestamp.now().date)
        let setup = BenchCommandsScenario.Plan(units: [workload.setup()], clients: 1)
        let paced = BenchCommandsScenario.Plan(
            units: (0..<((rate * seconds + 2) / 3)).map { workload.loan($0) },
            clients: BenchCommandsScenario.latencyClients)

        var samples = Array(repeating: [Double](), count: percentiles.count)
        var cpu = BenchCPU()
        for run in 0..<runs {
            let (latencies, runCPU) = try BenchCommandsScenario.withService(
                at: "\(directory)/latency-\(run).db", admin: workload.admin, keep: keepStores
            ) { service in
                try service.send(setup)
                return try service.latencies(paced, rate: rate)
            }
            cpu.add(runCPU)
            for (index, percentile) in percentiles.enumerated() {
                samples[index].append(BenchCommandsScenario.percentile(latencies, percentile.p))
            }
        }

        let figures = percentiles.enumerated().map { index, percentile in
            BenchCommand.Figure(
                scenario: name, measure: "latency \(percentile.name) at \(rate) commands/s", unit: "us",
                samples: samples[index], ceiling: nil, sameSizeRaw: nil, cpu: cpu)
        }
        if arguments.flag("json") {
            for figure in figures {
                guard case .object(var members) = figure.json else { continue }
                members["clients"] = .integer(Int64(BenchCommandsScenario.latencyClients))
                members["rate"] = .integer(Int64(rate))
                members["commands"] = .integer(Int64(paced.commands))
                if figure.measure.hasPrefix("latency p99 ") {
                    members["target"] = .integer(Int64(p99TargetMicroseconds))
                }
                printLine(CanonicalJSON.string(.object(members)))
            }
        } else {
            printLine(
                "strata bench latency — \(runs) runs; figures are min / median / max; "
                    + "every store WAL, synchronous=FULL")
            printLine(
                "  \(BenchCommandsScenario.latencyClients) clients paced open-loop at "
                    + "\(BenchCommand.format(Double(rate))) commands/s for \(seconds) s "
                    + "(\(BenchCommand.format(Double(paced.commands))) commands), scheduled send → reply")
            printTable(figures)
            BenchCommand.printCPU([("at \(BenchCommand.format(Double(rate))) commands/s", cpu)])
        }
        return 0
    }

    /// Milliseconds with two decimals: the JSON keeps integer microseconds.
    static func printTable(_ figures: [BenchCommand.Figure]) {
        let ms = { (value: Double) in String(format: "%.2f", value / 1000) }
        let rows = figures.map { f -> [String] in
            var target = "—"
            if f.measure.hasPrefix("latency p99 ") {
                target = f.median < p99TargetMicroseconds ? "below the 5 ms target" : "ABOVE the 5 ms target"
            }
            return [f.measure, "ms", ms(f.sorted.first!), ms(f.median), ms(f.sorted.last!), target]
        }
        BenchCommand.printColumns(["measure", "unit", "min", "median", "max", "target"], rows)
    }
}
