import Bus
import EventStore
import Foundation
import StrataCore
import SubjectKeys
import Workloads

/// `strata bench memory`: the command service's resident memory as the history it serves
/// grows, measured on a real `strata serve` child process.
enum BenchMemoryScenario {
    static let name = "memory"
    static let steps = 5
    /// 200 MB (10^6 bytes), in the KiB /proc counts in.
    static let targetKiB = 195_313
    static let keyId = "bench"

    static let discussion = """
        memory: the resident memory of `strata serve` as its store grows to --events events (default
        5000000) in \(steps) equal steps. Between steps, with no service running, the store grows by one
        lending business after another (4 agents registered, 100 accounts, then 500 loans and 500
        invoices, alternating), each command decided by the service's own command writer and appended
        to the store directly; the head is then signed with the service's checkpoint key, as a
        running service would have. At each step, --repeat times: `strata serve` starts as a child
        process (it folds every UserRegistered and InvoiceCreated event into its directory as it
        starts), a fresh business's setup and --loans loans (default 2000) of the lending loop are
        sent by 16 pipelined clients, then the service is stopped with SIGTERM. Read from
        /proc/PID/status: VmRSS once it logs "ready" (start), VmRSS after the last reply (end), and
        VmHWM then (peak: the most it was resident at any time, start-up included). Each step's
        figure is the peak in KiB, min / median / max over the runs; the last line is the highest
        peak of each run over all steps, with the last step's median peak as a percentage of the
        first's. Target: < 200 MB (195313 KiB), flat as the history grows.
        """

    struct Sample {
        let startKiB: Int
        let endKiB: Int
        let peakKiB: Int
    }

    static func run(_ arguments: ParsedArguments, directory: String, runs: Int) throws -> Int32 {
        let events = Int64(try arguments.integer("events", in: 100...100_000_000) ?? 5_000_000)
        let loans = Int(try arguments.integer("loans", in: 1...10_000_000) ?? 2000)
        let data = directory + "/memory"
        let storePath = data + "/events.db"
        guard !FileManager.default.fileExists(atPath: storePath) else {
            throw CommandFailure.environment("\(storePath) exists already: give --dir an empty directory")
        }
        _ = try BenchCommand.scratchDirectory(data)
        let admin = "bench-admin"
        let today = Timestamp.now().date
        try BenchCommandsScenario.bootstrapAdmin(
            admin, storePath: storePath, keysPath: data + "/" + SubjectKeyStore.fileName)
        let secret = try KeysCommand.randomSecret()
        var keys = KeyFile()
        try keys.add(KeyFile.Key(id: keyId, secret: secret, scopes: [.commands, .history]))
        try KeysCommand.writePrivateFile(data + "/keys.json", contents: keys.json)

        var history = BenchLendingHistory(admin: admin, today: today)
        var stepEvents: [Int64] = []
        var samples: [[Sample]] = []
        for step in 1...steps {
            let target = events * Int64(step) / Int64(steps)
            stepEvents.append(try history.grow(storePath, to: target, checkpointKey: data + "/checkpoint.key"))
            var stepSamples: [Sample] = []
            for run in 0..<runs {
                let workload = LendingWorkload(admin: admin, prefix: "m\(step)r\(run)", today: today)
                stepSamples.append(try measure(data, workload: workload, loans: loans, secret: secret))
            }
            samples.append(stepSamples)
        }

        let figures = samples.enumerated().map { step, runs in
            BenchCommand.Figure(
                scenario: name, measure: "serve peak RSS, \(stepEvents[step]) events stored", unit: "KiB",
                samples: runs.map { Double($0.peakKiB) }, ceiling: nil, sameSizeRaw: nil)
        }
        let highest = BenchCommand.Figure(
            scenario: name, measure: "serve peak RSS, highest of \(steps) steps", unit: "KiB",
            samples: (0..<runs).map { run in Double(samples.map { $0[run].peakKiB }.max()!) }, ceiling: nil,
            sameSizeRaw: nil)
        let growthPercent = Int((figures.last!.median / figures.first!.median * 100).rounded())
        if arguments.flag("json") {
            for (step, figure) in figures.enumerated() {
                guard case .object(var members) = figure.json else { continue }
                members["events"] = .integer(stepEvents[step])
                members["startKiB"] = .integer(Int64(median(samples[step].map(\.startKiB))))
                members["endKiB"] = .integer(Int64(median(samples[step].map(\.endKiB))))
                members["loans"] = .integer(Int64(loans))
                members["target"] = .integer(Int64(targetKiB))
                printLine(CanonicalJSON.string(.object(members)))
            }
            guard case .object(var members) = highest.json else { return 0 }
            members["events"] = .integer(stepEvents.last!)
            members["target"] = .integer(Int64(targetKiB))
            members["lastOverFirstPercent"] = .integer(Int64(growthPercent))
            printLine(CanonicalJSON.string(.object(members)))
        } else {
            printLine(
                "strata bench memory — strata serve as a child process, \(runs) runs per step, \(loans) loans each; "
                    + "RSS in MiB (start / end: medians; peak: min / median / max)")
            func mib(_ kib: Double) -> String { String(format: "%.1f", kib / 1024) }
            let rows = figures.enumerated().map { step, f -> [String] in
                [
                    BenchCommand.format(Double(stepEvents[step])), mib(Double(median(samples[step].map(\.startKiB)))),
                    mib(Double(median(samples[step].map(\.endKiB)))), mib(f.sorted.first!), mib(f.median),
                    mib(f.sorted.last!), "\(Int((f.median / Double(targetKiB) * 100).rounded()))% of 200 MB",
                ]
            }
            BenchCommand.printColumns(
                ["events stored", "start", "end", "peak min", "peak median", "peak max", "target"], rows)
            let highestKiB = highest.sorted.last!
            printLine(
                "highest peak \(mib(highestKiB)) MiB (\(highestKiB < Double(targetKiB) ? "below" : "ABOVE") "
                    + "the 200 MB target); last step / first step: \(growthPercent)%")
        }
        return 0
    }

    /// One service run on `data`: start, the workload, stop.
    static func measure(_ data: String, workload: LendingWorkload, loans: Int, secret: [UInt8]) throws -> Sample {
        let any = "tcp://127.0.0.1:*"
        let service = try BenchChildProcess.start(
            [
                "serve", "--data", data, "--keys", data + "/keys.json", "--checkpoint-key", data + "/checkpoint.key",
                "--commands", any, "--events", any, "--history", any,
            ], standardError: data + "/serve.stderr")
        var stopped = false
        defer {
            if !stopped {
                service.signal(SIGKILL)
                _ = service.wait()
            }
        }
        let ready = try service.waitForLine(containing: " ready ", timeout: .seconds(1800))
        let commands = ready.split(separator: " ").first { $0.hasPrefix("commands=") }
        guard let endpoint = commands?.dropFirst("commands=".count) else {
            throw CommandFailure.problem("the service's ready line names no commands endpoint: \(ready)")
        }
        let start = try service.memoryKiB("VmRSS")
        let context = try ZMQContext()
        try send(.init(units: [workload.setup()], clients: 1), to: String(endpoint), secret: secret, context: context)
        try send(
            .init(units: (0..<loans).map { workload.loan($0) }, clients: BenchCommandsScenario.clients),
            to: String(endpoint), secret: secret, context: context)
        let sample = Sample(
            startKiB: start, endKiB: try service.memoryKiB("VmRSS"), peakKiB: try service.memoryKiB("VmHWM"))
        service.signal(SIGTERM)
        let exit = service.wait()
        stopped = true
        guard exit.exitCode == 0 else { throw CommandFailure.problem(service.failure(exit)) }
        return sample
    }

    /// Sends `plan` from its clients, one thread each, pipelined as `bench commands` does;
    /// any reply but an acceptance fails the run.
    static func send(
        _ plan: BenchCommandsScenario.Plan, to endpoint: String, secret: [UInt8], context: ZMQContext
    ) throws {
        let failures = Locked<[String]>([])
        let done = DispatchGroup()
        for (index, client) in plan.clients.enumerated() {
            done.enter()
            startThread(named: "bench-client-\(index)") {
                defer { done.leave() }
                do {
                    let socket = try SignedClient(context, endpoint: endpoint, keyId: keyId, secret: secret)
                    defer { socket.close() }
                    try BenchCommandsScenario.pipeline(socket, .init(index: index, client: client))
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        done.wait()
        if let failure = failures.withLock({ $0.first }) { throw CommandFailure.problem(failure) }
    }

    static func median(_ values: [Int]) -> Int { Int(BenchCommand.median(values.map(Double.init)).rounded()) }
}
