import Bus
import CommandService
import Dispatch
import EventStore
import Foundation
import Synchronization
import ProjectorRuntime
import StrataCore
import StrataSQLite
import StrataTesting
import Testing
import Workloads

/// The projectors as real processes beside a real `strata serve`: killed, starved of live
/// events, started late, they end equal to a rebuild from the store.
@Suite(.serialized) struct ProjectorProcessTests {
    @Test func killedMidBatchAndRestartedEqualsARebuild() throws {
        let system = try System("kill")
        try system.send(system.workload.setup())
        var projectors = try ["readmodels", "audit"].map { try system.projector($0) }

        // Load on one thread; on this one, SIGKILL a projector at random moments and restart it.
        let load = system.sendInBackground((0..<1500).flatMap { system.workload.loan($0) })
        var kills = 0
        while !load.isDone() || kills < 4 {
            usleep(UInt32.random(in: 150_000...600_000))
            let index = kills % 2
            projectors[index].send(signal: SIGKILL)
            #expect(projectors[index].waitForExit() == SIGKILL)
            projectors[index] = try system.projector(projectors[index].arguments[1])
            kills += 1
        }
        try load.wait()

        let head = try system.service.store().head()
        for projector in projectors {
            let name = projector.arguments[1]
            try system.waitForCheckpoint(name, head)
            // The restarted process resumed from its checkpoint rather than from 0.
            let ready = try projector.waitForLine(containing: " ready ")
            #expect(!ready.contains("checkpoint=0 "), "\(ready)")
            try system.expectEqualToRebuild(name)
        }
        #expect(kills >= 4)
    }

    @Test func aFloodThatOverrunsTheSubscriberStillConverges() throws {
        // A publisher that queues only 50 events per subscriber: a paused subscriber loses events.
        let system = try System("flood", serveArguments: ["--publisher-hwm", "50"])
        try system.send(system.workload.setup())
        let projector = try system.projector(
            "readmodels", ["--subscriber-hwm", "50", "--subscriber-buffer", "16384"])
        // Past its start-up catch-up, so it is following the bus live: paused before that, it
        // would read the whole flood from history on start and never see a gap.
        try projector.waitForLine(containing: "caught up through history on start")

        // Paused through the whole flood: the service publishes far more (about 10 MB) than the
        // publisher's queue and the kernel's socket buffers (at most 4 MB sending here, 16 KiB
        // receiving) hold, so the bus must drop.
        projector.send(signal: SIGSTOP)
        try system.send((0..<3500).flatMap { system.workload.loan($0) })
        projector.send(signal: SIGCONT)

        try system.waitForCheckpoint("readmodels", try system.service.store().head())
        // Events were dropped (the projector saw a gap, or a heartbeat ahead of what it had),
        // and history filled them in while the projector kept running.
        let refills = projector.log.split(separator: "\n").filter {
            $0.contains("caught up through history after a gap") || $0.contains("caught up through history as the heartbeat")
        }
        #expect(!refills.isEmpty, "\(projector.log)")
        try system.expectEqualToRebuild("readmodels")
    }

    @Test func aProjectorStartedAfterTenThousandEventsCatchesUp() throws {
        let system = try System("late")
        try system.send(system.workload.setup())
        try system.send((0..<2600).flatMap { system.workload.loan($0) })
        let head = try system.service.store().head()
        #expect(head > 10_000)

        let projectors = try ["readmodels", "audit"].map { try system.projector($0) }
        for projector in projectors {
            let name = projector.arguments[1]
            try system.waitForCheckpoint(name, head)
            let caughtUp = try projector.waitForLine(containing: "caught up through history on start")
            #expect(caughtUp.contains("now at position \(head)") || caughtUp.contains("events, now at"), "\(caughtUp)")
            try system.expectEqualToRebuild(name)
        }
        // Live again after catching up: one more loan reaches both files.
        try system.send(system.workload.loan(2600))
        let after = try system.service.store().head()
        for projector in projectors { try system.waitForCheckpoint(projector.arguments[1], after) }
    }
}

@Suite(.serialized) struct PoisonEventTests {
    /// An event whose bytes were changed in the store breaks the chain: the projector stops
    /// there, says so, `status` shows it, and only an operator's explicit skip moves it on.
    @Test func aTamperedEventStopsTheProjectorUntilAnOperatorSkipsIt() throws {
        let system = try System("poison")
        try system.send(system.workload.setup())
        try system.send((0..<20).flatMap { system.workload.loan($0) })
        system.service.stop()
        let storePath = system.data.appendingPathComponent("events.db").path
        let victim: Int64 = 30
        do {
            let store = try SQLiteConnection(path: storePath, mode: .readWrite)
            try store.statement("UPDATE events SET data = replace(data, 'acct', 'acxt') WHERE position = ?")
                .run([.integer(victim)])
            #expect(store.changes == 1)
        }
        try system.restartService()
        let head = try system.service.store().head()

        let projector = try system.projector("readmodels")
        #expect(projector.waitForExit(timeout: 60) == 1, "\(projector.log)")
        #expect(projector.log.contains("stopped at position \(victim)"), "\(projector.log)")
        #expect(projector.log.contains("hash chain is broken"), "\(projector.log)")

        let status = try ChildProcess.strata(["status", "--format", "json", "--data", system.data.path])
        #expect(status.exitCode == 1)
        let json = try JSONParser.parse(status.stdout)
        #expect(json["projections"]?["readmodels"] == .integer(victim - 1), "\(status.stdout)")
        #expect(json["errors"]?["readmodels"]?.stringValue?.contains("position \(victim)") == true, "\(status.stdout)")

        // Starting it again without an operator's act refuses, naming the way out.
        let again = try system.projector("readmodels")
        #expect(again.waitForExit(timeout: 60) == 1)
        #expect(again.log.contains("--skip \(victim) --reason"), "\(again.log)")

        // Skipping is explicit, logged and recorded; then the projector runs to the head.
        let skipping = try system.projector("readmodels", ["--skip", "\(victim)", "--reason", "tampered in a test"])
        try skipping.waitForLine(containing: "skipped position \(victim)")
        try system.waitForCheckpoint("readmodels", head)
        skipping.stop()
        let after = try ChildProcess.strata(["status", "--format", "json", "--data", system.data.path])
        #expect(after.exitCode == 0, "\(after.stdout)")
        // A rebuild passes over the same event, so it equals the live file.
        try system.expectEqualToRebuild("readmodels")
    }
}

/// A data directory, a running `strata serve`, and what the tests do with them.
final class System {
    let data: URL
    private(set) var service: ServiceProcess
    private let serveArguments: [String]
    let workload: LendingWorkload
    let context: ZMQContext

    init(_ label: String, serveArguments: [String] = []) throws {
        data = try ChildProcess.temporaryDirectory("strata-projector-\(label)")
        try ServiceProcess.prepare(data)
        service = try ServiceProcess(dataDirectory: data, arguments: serveArguments)
        self.serveArguments = serveArguments
        workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: label, agents: 4, accountsPerAgent: 10, today: Timestamp.now().date)
        context = try ZMQContext()
    }

    deinit {
        service.stop()
        try? FileManager.default.removeItem(at: data)
    }

    /// Stops the service (if it runs) and starts it again on the same data, on new ports.
    func restartService() throws {
        service.stop()
        service = try ServiceProcess(dataDirectory: data, arguments: serveArguments)
    }

    /// `strata project NAME` against this system's service.
    func projector(_ name: String, _ extra: [String] = []) throws -> StrataProcess {
        try StrataProcess(
            ["project", name, "--data", data.path, "--events", service.events, "--history", service.history]
                + ["--key", ServiceProcess.Keys.service] + extra)
    }

    /// Sends every body pipelined and requires every one accepted.
    func send(_ bodies: [CommandBody]) throws {
        try System.send(bodies, endpoint: service.commands, secret: service.secret(of: ServiceProcess.Keys.service), context: context)
    }

    static func send(_ bodies: [CommandBody], endpoint: String, secret: [UInt8], context: ZMQContext) throws {
        let client = try SignedClient(context, endpoint: endpoint, keyId: ServiceProcess.Keys.service, secret: secret)
        defer { client.close() }
        var sent = 0
        var answered = 0
        while answered < bodies.count {
            while sent < bodies.count && sent - answered < 500 {
                try client.send(bodies[sent].json)
                sent += 1
            }
            guard let reply = try client.receive(timeoutMilliseconds: 60_000) else {
                throw ServiceProcessError("no reply to \(bodies[answered].id)")
            }
            guard try JSONParser.parse(reply)["ok"] == .bool(true) else {
                throw ServiceProcessError("\(bodies[answered].id) refused: \(String(decoding: reply, as: UTF8.self))")
            }
            answered += 1
        }
    }

    /// Sends on another thread; the result says when it is done and how it went.
    func sendInBackground(_ bodies: [CommandBody]) -> BackgroundSend {
        let background = BackgroundSend()
        let endpoint = service.commands
        let context = context
        let secret = (try? service.secret(of: ServiceProcess.Keys.service)) ?? []
        let thread = Thread {
            do {
                try System.send(bodies, endpoint: endpoint, secret: secret, context: context)
                background.finish(nil)
            } catch {
                background.finish("\(error)")
            }
        }
        thread.start()
        return background
    }

    /// Waits until the projection file's checkpoint reaches `position`.
    func waitForCheckpoint(_ name: String, _ position: Int64, timeout: TimeInterval = 120) throws {
        let path = data.appendingPathComponent("\(name).db").path
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let snapshot = try ProjectionSnapshot(path: path) {
                if let stop = snapshot.stop { throw ServiceProcessError("\(name) stopped: \(stop)") }
                if snapshot.checkpoint >= position { return }
            }
            guard Date() < deadline else { throw ServiceProcessError("\(name) did not reach \(position)") }
            usleep(50_000)
        }
    }

    /// `strata rebuild NAME --compare` says the live file equals a rebuild from the store.
    func expectEqualToRebuild(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try ChildProcess.strata(["rebuild", name, "--compare", "--data", data.path])
        #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.contains("equal:"), "\(result.stdout)", sourceLocation: sourceLocation)
    }
}

/// A send running on its own thread.
final class BackgroundSend: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let state = Mutex<(finished: Bool, failure: String?)>((false, nil))

    func finish(_ failure: String?) {
        state.withLock { $0 = (true, failure) }
        done.signal()
    }

    func isDone() -> Bool { state.withLock { $0.finished } }

    /// Waits for the send; throws what it failed with.
    func wait() throws {
        done.wait()
        done.signal()
        if let failure = state.withLock({ $0.failure }) { throw ServiceProcessError(failure) }
    }
}
