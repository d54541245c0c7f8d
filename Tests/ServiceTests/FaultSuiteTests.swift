import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// The fault suite: real processes killed, stopped, restarted and starved of disk, and what
/// must hold afterwards. One test at a time (the nested suites too): each runs a service
/// and projectors that would otherwise compete for the two cores with the next.
/// `STRATA_FAULT_KILLS` and `STRATA_FAULT_SEED` (see `FaultPlan`) set how many kills and where.
@Suite(.serialized) enum FaultSuiteTests {
    /// SIGKILL `strata serve` at random moments under pipelined load from several
    /// connections, again and again on the same data directory; after every restart the
    /// store holds everything acknowledged and nothing half-applied (`CommandLedger`), and at
    /// the end every command sent again is a duplicate if it was decided, else decided now.
    @Suite struct ServiceKills {
        @Test func killedAtRandomUnderPipelinedLoadLosesNothingAcknowledged() throws {
            var plan = FaultPlan("service kills")
            let data = try ChildProcess.temporaryDirectory("strata-service-kills")
            defer { try? FileManager.default.removeItem(at: data) }
            try ServiceProcess.prepare(data)
            let context = try ZMQContext()
            var service = try ServiceProcess(dataDirectory: data)

            // The business's set-up first, all of it accepted before the load starts.
            let workload = LendingWorkload(
                admin: ServiceProcess.admin, prefix: "sk", agents: 4, accountsPerAgent: 25,
                today: Timestamp.now().date)
            let setup = workload.setup()
            try System.send(
                setup, endpoint: service.commands, secret: service.secret(of: ServiceProcess.Keys.service),
                context: context)

            // Four connections, each with its own loans (a loan's three commands on one
            // connection, in order).
            let connections = 4
            let loansPerConnection = 700
            let ledger = CommandLedger(
                setup: setup,
                connections: (0..<connections).map { connection in
                    (0..<loansPerConnection).flatMap { workload.loan($0 * connections + connection) }
                },
                setupHead: try service.store().head())
            // Each kill comes after a random number of this round's replies, while most of the
            // round's commands are still in flight, and leaves work for the rounds after it.
            let most = max(20, ledger.total / (3 * plan.kills))
            for kill in 1...plan.kills {
                let killAfter = plan.next(in: (most / 3)...most)
                let round = try ledger.round(service: service, context: context, killAfter: killAfter) {
                    service.send(signal: SIGKILL)
                }
                #expect(service.waitForExit(timeout: 10) == SIGKILL, "the service ended by SIGKILL")
                #expect(
                    round.answered < ledger.total - round.firstSent.reduce(0, +),
                    "kill \(kill) came after the last reply")
                service = try ServiceProcess(dataDirectory: data)
                let store = try service.store()
                try ledger.record(round, store: store)
                try ledger.checkStore(store, "after kill \(kill)")
                print(
                    "service kills: kill \(kill) after \(killAfter) replies (\(round.answeredAtKill) at the kill, "
                        + "\(round.answered) in all); \(ledger.acknowledgedTotal) acknowledged, "
                        + "\(ledger.decided.count) decided of \(ledger.total), head \(try store.head())")
            }
            let resend = try ledger.resendEverything(service: service, context: context)
            let head = try service.store().head()
            #expect(service.stop() == 0)
            print(
                "service kills: \(plan.kills) kills, seed \(plan.seed); \(ledger.total) loan commands on "
                    + "\(connections) connections, \(ledger.sent) sends with retries and the final resend, "
                    + "\(ledger.answered) replies, "
                    + "\(ledger.duplicates) answered as duplicates; on the resend \(resend.duplicates) duplicates and "
                    + "\(resend.decidedNow) decided now; \(head) events, chain intact")
        }
    }

    /// The projectors as real processes under faults: SIGKILLed mid-batch, stopped while the
    /// bus drops what they cannot take, left running while the service restarts. Each ends at
    /// the head, equal to a rebuild from the store.
    @Suite struct ProjectorFaults {
        @Test func killedAtRandomWhileLoadRunsEqualsARebuild() throws {
            var plan = FaultPlan("projector kills")
            let system = try System("pkill")
            try system.send(system.workload.setup())
            var projectors = try ["readmodels", "audit"].map { try system.projector($0) }

            // Load on one thread; on this one, SIGKILL a projector at random moments and start
            // it again, each in turn, until the load is done and every kill is spent.
            let loans = 1500
            let load = system.sendInBackground((0..<loans).flatMap { system.workload.loan($0) })
            var kills = [0, 0]
            while !load.isDone() || kills.reduce(0, +) < 2 * plan.kills {
                usleep(UInt32(plan.next(in: 150_000...600_000)))
                let index = kills.reduce(0, +) % 2
                projectors[index].send(signal: SIGKILL)
                #expect(projectors[index].waitForExit() == SIGKILL)
                projectors[index] = try system.projector(projectors[index].arguments[1])
                kills[index] += 1
            }
            try load.wait()

            let head = try system.service.store().head()
            for projector in projectors {
                let name = projector.arguments[1]
                try system.expectConverged(name)
                // The restarted process resumed from its checkpoint rather than from 0.
                let ready = try projector.waitForLine(containing: " ready ")
                #expect(!ready.contains("checkpoint=0 "), "\(ready)")
            }
            print(
                "projector kills: readmodels killed \(kills[0]) times, audit \(kills[1]), seed \(plan.seed); "
                    + "\(3 * loans) commands acknowledged; both at the head \(head), equal to rebuilds")
        }

        @Test func stoppedWhileLoadContinuesCatchesUpThroughHistory() throws {
            // A publisher that queues only 50 events per subscriber: a stopped subscriber loses events.
            let system = try System("sigstop", serveArguments: ["--publisher-hwm", "50"])
            try system.send(system.workload.setup())
            let projector = try system.projector(
                "readmodels", ["--subscriber-hwm", "50", "--subscriber-buffer", "16384"])
            // Past its start-up catch-up, so it is following the bus live: stopped before that,
            // it would read everything from history on start and never see a gap.
            try projector.waitForLine(containing: "caught up through history on start")
            let before = try system.timedSend((0..<500).flatMap { system.workload.loan($0) })

            // Stopped through a flood: the service publishes far more (about 10 MB) than the
            // publisher's queue and the kernel's socket buffers (at most 4 MB sending here,
            // 16 KiB receiving) hold, so the bus must drop.
            projector.send(signal: SIGSTOP)
            let flood = (500..<3500).flatMap { system.workload.loan($0) }
            let whileStopped = try system.timedSend(flood)
            // Still answering at once: one more command round trip, and a status read.
            try system.send(system.workload.loan(3500))
            let status = try ChildProcess.strata(["status", "--format", "json", "--data", system.data.path])
            #expect(status.exitCode == 0, "\(status.stdout)\(status.stderr)")
            #expect(system.service.isRunning)
            let headWhileStopped = try system.service.store().head()
            let behind = headWhileStopped - (try system.checkpoint("readmodels"))
            projector.send(signal: SIGCONT)

            try system.expectConverged("readmodels")
            // Events were dropped (the projector saw a gap, or a heartbeat ahead of what it had),
            // and history filled them in while the projector kept running.
            let refills = projector.log.split(separator: "\n").filter {
                $0.contains("caught up through history after a gap")
                    || $0.contains("caught up through history as the heartbeat")
            }
            #expect(!refills.isEmpty, "\(projector.log)")
            #expect(projector.isRunning)
            print(
                "projector stopped: \(1500 + flood.count + 3) commands acknowledged; "
                    + "\(Int(before)) commands/s before the stop, \(Int(whileStopped)) while stopped; "
                    + "\(behind) events behind at SIGCONT, \(refills.count) catch-ups through history; "
                    + "at the head \(headWhileStopped), equal to a rebuild")
        }

        @Test func serviceRestartedUnderRunningProjectorsTheyReconnectAndConverge() throws {
            let system = try System("restart", fixedPorts: true)
            try system.send(system.workload.setup())
            let projectors = try ["readmodels", "audit"].map { try system.projector($0) }
            try system.send((0..<400).flatMap { system.workload.loan($0) })
            let headBefore = try system.service.store().head()
            let caughtUpBefore = try ["readmodels", "audit"].map { try system.checkpoint($0) }

            // SIGTERM and start again on the same data and endpoints while the projectors run
            // (and may still be catching up); then more commands.
            try system.restartService()
            try system.send((400..<800).flatMap { system.workload.loan($0) })
            let head = try system.service.store().head()
            for projector in projectors {
                try system.expectConverged(projector.arguments[1])
                #expect(projector.isRunning, "\(projector.log)")
            }
            print(
                "service restart: projectors at \(caughtUpBefore) of \(headBefore) when it stopped; "
                    + "2400 commands acknowledged; both projectors at the new head \(head), equal to rebuilds")
        }
    }
}
