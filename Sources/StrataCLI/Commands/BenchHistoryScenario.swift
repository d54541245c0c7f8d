import EventStore
import Foundation
import StrataCore

/// `strata bench replay` and `strata bench verify`: reading the whole history back, as the
/// real commands do it, from a store filled once per benchmark run.
enum BenchHistoryScenario {
    static let replay = "replay"
    static let verify = "verify"

    static let replayTarget = 1_000_000.0
    static let verifyTarget = 500_000.0

    static let discussion = """
        replay, verify: events/s of `strata replay` (every event as a JSON line, to /dev/null) and of
        `strata verify` (the hash chain and checkpoints) over DIR/events.db, filled once, untimed,
        with --events events (default 1000000) the way the append scenario writes them (calls of 100
        one-event commands, ≈ 300-byte payloads). Each run starts the real command as a child process
        of this executable and times it from its start to its exit, start-up and opening the store
        included: what an operator waits for. The child's peak resident memory is reported beside it.
        """

    static func run(_ scenario: String, _ arguments: ParsedArguments, directory: String, runs: Int) throws -> Int32 {
        let events = Int(try arguments.integer("events", in: 100...100_000_000) ?? 1_000_000)
        let store = directory + "/events.db"
        guard !FileManager.default.fileExists(atPath: store) else {
            throw CommandFailure.environment("\(store) exists already: give --dir an empty directory")
        }
        try fill(store, events: events)
        let command = scenario == replay ? ["replay", "--data", directory] : ["verify", "--data", directory]
        var rates: [Double] = []
        var peakKiB = 0
        for _ in 0..<runs {
            let (seconds, exit) = try BenchChildProcess.run(command, standardError: directory + "/\(scenario).stderr")
            rates.append(Double(events) / seconds)
            peakKiB = max(peakKiB, exit.peakKiB)
        }
        let target = scenario == replay ? replayTarget : verifyTarget
        let measure = scenario == replay ? "replay, JSON lines to /dev/null" : "verify, hash chain and checkpoints"
        let figure = BenchCommand.Figure(
            scenario: scenario, measure: measure, unit: "events/s", samples: rates, ceiling: nil, sameSizeRaw: nil)
        if arguments.flag("json") {
            guard case .object(var members) = figure.json else { return 0 }
            members["events"] = .integer(Int64(events))
            members["target"] = .integer(Int64(target))
            members["targetPercent"] = .integer(Int64((figure.median / target * 100).rounded()))
            members["peakRSSKiB"] = .integer(Int64(peakKiB))
            printLine(CanonicalJSON.string(.object(members)))
        } else {
            printLine(
                "strata bench \(scenario) — \(BenchCommand.format(Double(events))) events, \(runs) runs; "
                    + "figures are min / median / max; the real command as a child process")
            BenchCommand.printColumns(
                ["measure", "unit", "min", "median", "max", "target", "peak RSS"],
                [
                    [
                        measure, "events/s", BenchCommand.format(figure.sorted.first!),
                        BenchCommand.format(figure.median), BenchCommand.format(figure.sorted.last!),
                        "\(Int((figure.median / target * 100).rounded()))% of ≥ \(BenchCommand.format(target))",
                        String(format: "%.1f MiB", Double(peakKiB) / 1024),
                    ]
                ])
        }
        return 0
    }

    /// Appends `events` events to a new store at `path` as the append scenario does: calls of
    /// 100 one-event commands, each the command `makeCommandBatches` makes at that number,
    /// built one call at a time so that memory stays flat whatever the count.
    static func fill(_ path: String, events: Int) throws {
        let store = try SQLiteEventStore(path: path)
        var n = 0
        while n < events {
            let batch = try (n..<min(n + 100, events)).map(command)
            for result in try store.append(batch) {
                guard case .recorded(.accepted) = result else {
                    throw CommandFailure.problem("filling \(path): a command was not accepted: \(result)")
                }
            }
            n += batch.count
        }
    }

    /// Command `n` of `makeCommandBatches(events:eventsPerCommand: 1)`: its id, stream, type
    /// and payload.
    static func command(_ n: Int) throws -> CommandWrite {
        let event = try NewEvent(
            stream: StreamName(category: "loan", id: "L\(n / 3)")!, type: "PaymentReceived", schemaVersion: 2,
            data: BenchCommand.payload(n))
        return try CommandWrite(
            commandId: "bench-\(n)", bodyDigest: HashChain.sha256(Array("bench-\(n)".utf8)), actor: "bench",
            commandType: "ReceivePayment", decision: .append([event], expectations: [:]))
    }
}
