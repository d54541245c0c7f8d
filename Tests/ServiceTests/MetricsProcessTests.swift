import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing
import Workloads

/// `--metrics-file` on the real processes: the file is there from the start, holds the
/// exposition format to the letter, counts exactly what was answered, is replaced whole
/// (never seen half-written), and is written once more at a stop. And the structured log
/// lines that name each command and its positions.
@Suite(.serialized) struct MetricsProcessTests {
    @Test func serveCountsEveryAnswerAndWritesTheFileOnceMoreAtTheStop() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-serve")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let file = data.appendingPathComponent("serve.prom").path
        // An interval no test waits for: whatever the file says after the stop, the stop wrote.
        let service = try ServiceProcess(
            dataDirectory: data,
            arguments: ["--metrics-file", file, "--metrics-interval", "3600", "--log-level", "debug"])
        let headAtStart = try service.store().head()

        let initial = try readExposition(file)
        #expect(initial.value("strata_head_position") == Double(headAtStart))
        #expect(initial.samples(named: "strata_commands_total").isEmpty)
        #expect(initial.value("strata_batch_commands_count") == 0)
        #expect(initial.value("strata_events_appended_total") == 0)
        #expect(initial.value("strata_writer_streams_folded_total") == 0)
        #expect(initial.value("strata_writer_cache_streams") == 0)
        let started = try #require(initial.value("strata_process_start_time_seconds", ["process": "serve"]))
        #expect(abs(started - Date().timeIntervalSince1970) < 120)
        #expect(initial.types["strata_commit_duration_seconds"] == "histogram")

        // Accepted (the setup), refused (an unknown type, a loan that does not exist), a
        // duplicate (a setup body again), and two refused at the gate.
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "met", agents: 2, accountsPerAgent: 3, today: Timestamp.now().date)
        var bodies = workload.setup()
        bodies.append(CommandBody(id: "met-unknown", type: "NoSuchCommand", actor: ServiceProcess.admin, payload: [:]))
        bodies.append(
            CommandBody(
                id: "met-missing", type: "ApproveLoan", actor: ServiceProcess.admin,
                payload: ["loanId": .string("met-no-such-loan")]))
        bodies.append(bodies[0])
        let context = try ZMQContext()
        let client = try service.commandClient(context)
        defer { client.close() }
        for body in bodies { try client.send(body.json) }
        var expected: [[String: String]: Double] = [:]
        var lines: [String] = []
        var decided = 0
        for body in bodies {
            let reply = try JSONParser.parse(try #require(try client.receive(timeoutMilliseconds: 30_000)))
            let type = body.type == "NoSuchCommand" ? "UnknownCommand" : body.type
            let outcome: String
            if reply["duplicate"] == .bool(true) {
                outcome = "duplicate"
            } else if reply["ok"] == .bool(true) {
                outcome = "accepted"
            } else {
                outcome = try #require(reply["error"]?["code"]?.stringValue).lowercased()
            }
            expected[["type": type, "outcome": outcome], default: 0] += 1
            decided += 1
            if let events = reply["events"]?.arrayValue, let first = events.first?["position"]?.integerValue,
                let last = events.last?["position"]?.integerValue
            {
                lines.append("command=\(body.id) type=\(type) outcome=\(outcome) position=\(first)-\(last)")
            } else {
                let code = try #require(reply["error"]?["code"]?.stringValue)
                lines.append("command=\(body.id) type=\(type) outcome=refused code=\(code) ")
            }
        }
        #expect(expected[["type": "UnknownCommand", "outcome": "invalid"]] == 1, "\(expected)")
        #expect(expected[["type": "RegisterUser", "outcome": "duplicate"]] == 1, "\(expected)")
        #expect(expected.count == 6, "\(expected)")

        let forged = try SignedClient(
            context, endpoint: service.commands, keyId: ServiceProcess.Keys.service,
            secret: [UInt8](repeating: 7, count: 32))
        defer { forged.close() }
        let historyOnly = try service.commandClient(context, key: ServiceProcess.Keys.historyOnly)
        defer { historyOnly.close() }
        for (gateClient, code) in [(forged, "UNAUTHENTICATED"), (historyOnly, "FORBIDDEN")] {
            let reply = try JSONParser.parse(try #require(try gateClient.request(bodies[1].json)))
            #expect(reply["error"]?["code"]?.stringValue == code)
        }
        let headAfter = try service.store().head()
        #expect(service.stop() == 0, "\(service.log)")

        let final = try readExposition(file)
        var counted: [[String: String]: Double] = [:]
        for sample in final.samples(named: "strata_commands_total") { counted[sample.labels] = sample.value }
        #expect(counted == expected)
        #expect(
            final.samples(named: "strata_requests_refused_total").map { [$0.labels["code"] ?? "": $0.value] }
                == [["forbidden": 1], ["unauthenticated": 1]])
        #expect(final.value("strata_head_position") == Double(headAfter))
        #expect(final.value("strata_events_appended_total") == Double(headAfter - headAtStart))
        #expect(final.value("strata_batch_commands_sum") == Double(decided))
        let batches = try #require(final.value("strata_batch_commands_count"))
        #expect(batches >= 1 && batches <= Double(decided))
        #expect(final.value("strata_commit_duration_seconds_count") == batches)
        #expect(final.value("strata_batch_duration_seconds_count") == batches)
        #expect(final.value("strata_process_start_time_seconds", ["process": "serve"]) == started)
        // The admin, two agents, their ledgers and six accounts at least, each read from the store
        // once and held since: nothing was dropped, as the cache is far from either bound.
        let held = try #require(final.value("strata_writer_cache_streams"))
        #expect(held >= 9, "\(held) streams held")
        #expect(final.value("strata_writer_streams_folded_total") == held)
        #expect(try #require(final.value("strata_writer_cache_bytes")) >= held * 320)

        // At debug level every decided command has its line, accepted ones with their positions.
        for line in lines {
            #expect(service.log.contains(" debug serve: \(line)"), "\(line)\n\(service.log)")
        }
        #expect(
            service.log.contains("refused at the gate command=met-setup-approve-0 code=UNAUTHENTICATED"), "\(service.log)")
    }

    /// History requests are counted by how they were answered: pages, and each refusal by its
    /// code, those of the gate (a forged signature, a key without the scope, a body that is not
    /// JSON) included; before, nothing showed history's load or who was refused there.
    @Test func historyRequestsAreCountedByOutcome() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-history")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let file = data.appendingPathComponent("serve.prom").path
        let service = try ServiceProcess(
            dataDirectory: data, arguments: ["--metrics-file", file, "--metrics-interval", "3600"])
        let initial = try readExposition(file)
        #expect(initial.samples(named: "strata_history_requests_total").isEmpty)
        #expect(initial.types["strata_history_requests_total"] == "counter")

        let context = try ZMQContext()
        let reader = try service.historyClient(context)
        defer { reader.close() }
        let forged = try SignedClient(
            context, endpoint: service.history, keyId: ServiceProcess.Keys.service,
            secret: [UInt8](repeating: 7, count: 32))
        defer { forged.close() }
        let commandsOnly = try service.historyClient(context, key: ServiceProcess.Keys.commandsOnly)
        defer { commandsOnly.close() }
        let asked: [(SignedClient, String, String)] = [
            (reader, #"{"after":0,"limit":10}"#, "page"), (reader, #"{"after":1,"limit":10}"#, "page"),
            (reader, #"{"after":0,"limit":0}"#, "INVALID"), (reader, "not json", "MALFORMED"),
            (forged, #"{"after":0,"limit":10}"#, "UNAUTHENTICATED"),
            (commandsOnly, #"{"after":0,"limit":10}"#, "FORBIDDEN"),
        ]
        for (client, body, expected) in asked {
            let reply = try JSONParser.parse(try #require(try client.request(Array(body.utf8))))
            let outcome = reply["ok"] == .bool(true) ? "page" : reply["error"]?["code"]?.stringValue
            #expect(outcome == expected, "\(body): \(reply)")
        }
        #expect(service.stop() == 0, "\(service.log)")

        var counted: [String: Double] = [:]
        for sample in try readExposition(file).samples(named: "strata_history_requests_total") {
            counted[sample.labels["outcome"] ?? ""] = sample.value
        }
        #expect(
            counted == ["page": 2, "invalid": 1, "malformed": 1, "unauthenticated": 1, "forbidden": 1], "\(counted)")
    }

    @Test func aCommandAnsweredInternalIsLoggedAsAnErrorWithItsId() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-internal")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let file = data.appendingPathComponent("serve.prom").path
        let service = try ServiceProcess(dataDirectory: data, arguments: ["--metrics-file", file])
        let body = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "int", agents: 1, accountsPerAgent: 1, today: Timestamp.now().date
        ).setup()[0]
        let context = try ZMQContext()
        let client = try service.commandClient(context)
        defer { client.close() }

        // Another connection holds the write lock past the store's busy timeout: the commit fails.
        let blocker = try SQLiteConnection(path: data.appendingPathComponent("events.db").path, mode: .readWrite)
        try blocker.execute("BEGIN IMMEDIATE")
        let refused = try JSONParser.parse(try #require(try client.request(body.json, timeoutMilliseconds: 30_000)))
        try blocker.execute("ROLLBACK")
        blocker.close()
        #expect(refused["error"]?["code"] == .string("INTERNAL"), "\(refused)")
        #expect(refused["error"]?["reason"] == .string("STORE_FAILURE"), "\(refused)")
        // Not journaled: the same command again is decided afresh, and accepted.
        let accepted = try JSONParser.parse(try #require(try client.request(body.json, timeoutMilliseconds: 30_000)))
        #expect(accepted["ok"] == .bool(true) && accepted["duplicate"] == .bool(false), "\(accepted)")
        #expect(service.stop() == 0)

        let line = try #require(
            service.log.split(separator: "\n").first { $0.contains(" error serve: command=\(body.id) ") }, "\(service.log)")
        #expect(
            line.contains("type=RegisterUser outcome=refused code=INTERNAL reason=STORE_FAILURE message=\""), "\(line)")
        // Info level: no line for the accepted command.
        #expect(service.log.components(separatedBy: "command=\(body.id) ").count == 2, "\(service.log)")
        let final = try readExposition(file)
        #expect(final.value("strata_commands_total", ["type": "RegisterUser", "outcome": "internal"]) == 1)
        #expect(final.value("strata_commands_total", ["type": "RegisterUser", "outcome": "accepted"]) == 1)
        // Two batches, one commit: the batch the store refused had no commit to time.
        #expect(final.value("strata_batch_commands_count") == 2)
        #expect(final.value("strata_batch_duration_seconds_count") == 2)
        #expect(final.value("strata_commit_duration_seconds_count") == 1)
    }

    /// Read as fast as it can while the file is rewritten every 0.1 s under load: every read
    /// is a whole, valid file, and the file is a new one (a new inode) each time it changes,
    /// which only a rename over it gives.
    @Test func theFileIsReplacedWholeAndNeverSeenHalfWritten() throws {
        let directory = try ChildProcess.temporaryDirectory("strata-metrics-atomic")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("serve.prom").path
        let system = try System("metrics-atomic", serveArguments: ["--metrics-file", file, "--metrics-interval", "0.1"])
        try system.send(system.workload.setup())
        let load = system.sendInBackground((0..<300).flatMap { system.workload.loan($0) })

        var reads = 0
        var inodes: Set<UInt64> = []
        var lastHead = 0.0
        var lastCommands = 0.0
        let deadline = Date().addingTimeInterval(60)
        while (!load.isDone() || inodes.count < 20) && Date() < deadline {
            let (inode, text) = try readWithInode(file)
            reads += 1
            let exposition: Exposition
            do {
                exposition = try Exposition(text)
            } catch {
                Issue.record("read \(reads) is not a whole exposition: \(error)\n\(text)")
                break
            }
            inodes.insert(inode)
            let head = try #require(exposition.value("strata_head_position"))
            let commands = exposition.samples(named: "strata_commands_total").reduce(0) { $0 + $1.value }
            #expect(head >= lastHead && commands >= lastCommands)
            lastHead = head
            lastCommands = commands
        }
        try load.wait()
        #expect(inodes.count >= 20, "\(inodes.count) versions in \(reads) reads")
        #expect(system.service.stop() == 0)
        let final = try readExposition(file)
        #expect(final.value("strata_head_position") == Double(try system.service.store().head()))
        // Nothing but the file is left in its directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["serve.prom"])
        print("metrics file: \(reads) reads of \(inodes.count) versions, each whole")
    }

    @Test func aProjectorReportsItsPositionAndLagWhichReachesZero() throws {
        let system = try System("metrics-projector")
        try system.send(system.workload.setup())
        let file = system.data.appendingPathComponent("readmodels.prom").path
        let projector = try system.projector("readmodels", ["--metrics-file", file, "--metrics-interval", "0.2"])
        try projector.waitForLine(containing: " ready ")
        try system.send((0..<60).flatMap { system.workload.loan($0) })
        let head = try system.service.store().head()

        let labels = ["projection": "readmodels"]
        var reads = 0
        var caughtUp: Exposition?
        let deadline = Date().addingTimeInterval(60)
        while caughtUp == nil && Date() < deadline {
            let metrics = try readExposition(file)
            reads += 1
            let position = try #require(metrics.value("strata_projection_position", labels))
            let known = try #require(metrics.value("strata_projection_head_position", labels))
            // Whatever the moment, the lag is the head it knows less its position.
            #expect(metrics.value("strata_projection_lag_events", labels) == known - position)
            if position == Double(head) && known == Double(head) { caughtUp = metrics } else { usleep(50_000) }
        }
        let metrics = try #require(caughtUp, "never caught up to \(head) in \(reads) reads")
        #expect(metrics.value("strata_projection_lag_events", labels) == 0)
        #expect(metrics.value("strata_projection_lag_seconds", labels) == 0)
        // A fresh file: everything up to the head was applied by this process.
        #expect(metrics.value("strata_projection_events_applied_total", labels) == Double(head))
        #expect(try #require(metrics.value("strata_projection_catchups_total", labels)) >= 1)
        let lastEvent = try #require(metrics.value("strata_projection_last_event_timestamp_seconds", labels))
        #expect(abs(lastEvent - Date().timeIntervalSince1970) < 120)
        #expect(metrics.value("strata_process_start_time_seconds", ["process": "project-readmodels"]) != nil)

        #expect(projector.stop() == 0)
        #expect(projector.log.contains("stopped position=\(head)"), "\(projector.log)")
        #expect(projector.log.contains("caught up through history on start: events="), "\(projector.log)")
        #expect(try readExposition(file).value("strata_projection_position", labels) == Double(head))
    }

    /// A projection stopped at a tampered event: the file written as it exits shows where it
    /// stopped, the head beyond it, and the lag in events and seconds.
    @Test func aStoppedProjectionsLastMetricsShowItsLag() throws {
        let system = try System("metrics-poison")
        try system.send(system.workload.setup())
        try system.send((0..<10).flatMap { system.workload.loan($0) })
        system.service.stop()
        let victim: Int64 = 20
        do {
            let path = system.data.appendingPathComponent("events.db").path
            let store = try SQLiteConnection(path: path, mode: .readWrite)
            try store.statement("UPDATE events SET data = replace(data, 'acct', 'acxt') WHERE position = ?")
                .run([.integer(victim)])
            #expect(store.changes == 1)
        }
        try system.restartService()
        let head = try system.service.store().head()

        let file = system.data.appendingPathComponent("audit.prom").path
        let projector = try system.projector("audit", ["--metrics-file", file, "--metrics-interval", "3600"])
        #expect(projector.waitForExit(timeout: 60) == 1, "\(projector.log)")
        let metrics = try readExposition(file)
        let labels = ["projection": "audit"]
        #expect(metrics.value("strata_projection_position", labels) == Double(victim - 1))
        #expect(metrics.value("strata_projection_head_position", labels) == Double(head))
        #expect(metrics.value("strata_projection_lag_events", labels) == Double(head - victim + 1))
        #expect(try #require(metrics.value("strata_projection_lag_seconds", labels)) > 0)
        #expect(metrics.value("strata_projection_catchups_total", labels) == 0)
    }

    /// History does not answer (its endpoint leads nowhere) while the bus works: the heartbeats
    /// still tell the projector the head, so its metrics show it behind, in events and in
    /// seconds, rather than caught up.
    @Test func aProjectorWaitingForHistoryShowsItsLagFromTheHeartbeats() throws {
        let system = try System("metrics-no-history")
        try system.send(system.workload.setup())
        let head = try system.service.store().head()
        let file = system.data.appendingPathComponent("readmodels.prom").path
        let projector = try StrataProcess(
            ["project", "readmodels", "--data", system.data.path, "--events", system.service.events]
                + ["--history", "tcp://127.0.0.1:\(try freeLoopbackPort())", "--key", ServiceProcess.Keys.service]
                + ["--metrics-file", file, "--metrics-interval", "0.2"])
        try projector.waitForLine(containing: " ready ")

        let labels = ["projection": "readmodels"]
        var metrics = try readExposition(file)
        let deadline = Date().addingTimeInterval(30)
        while metrics.value("strata_projection_head_position", labels) != Double(head), Date() < deadline {
            usleep(100_000)
            metrics = try readExposition(file)
        }
        #expect(metrics.value("strata_projection_position", labels) == 0)
        #expect(metrics.value("strata_projection_head_position", labels) == Double(head), "\(projector.log)")
        #expect(metrics.value("strata_projection_lag_events", labels) == Double(head))
        // Nothing applied yet: the lag in seconds counts from the process's start.
        #expect(try #require(metrics.value("strata_projection_lag_seconds", labels)) > 0)
        #expect(projector.stop() == 0, "\(projector.log)")
    }

    /// `up --metrics-dir`: a file per process, which together read as one textfile directory:
    /// no series in two files, and a family in two files described alike in both.
    @Test func upWritesAFilePerProcessThatReadTogether() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-up")
        defer { try? FileManager.default.removeItem(at: data) }
        let (up, directory) = try Self.up(data, metricsInterval: "0.2")
        defer { up.stop() }
        for name in ["serve", "project-readmodels", "project-audit"] {
            try up.waitForLine(containing: "\(name): ready ")
        }
        let head = try SQLiteEventStore(readingAt: data.appendingPathComponent("events.db").path).head()

        let names = ["serve", "readmodels", "audit", "up"]
        var files: [String: Exposition] = [:]
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            files = [:]
            for name in names {
                let path = directory.appendingPathComponent("\(name).prom").path
                if FileManager.default.fileExists(atPath: path) { files[name] = try readExposition(path) }
            }
            let caughtUp = ["readmodels", "audit"].allSatisfy {
                files[$0]?.value("strata_projection_position", ["projection": $0]) == Double(head)
            }
            if files.count == 4 && caughtUp { break }
            usleep(100_000)
        }
        #expect(files.count == 4, "\(up.log)")
        #expect(files["serve"]?.value("strata_head_position") == Double(head))
        for (name, process) in zip(names, ["serve", "project-readmodels", "project-audit", "up"]) {
            #expect(files[name]?.value("strata_process_start_time_seconds", ["process": process]) != nil)
        }
        for process in ["serve", "project-readmodels", "project-audit"] {
            #expect(files["up"]?.value("strata_up_child_running", ["process": process]) == 1, "\(process)")
            #expect(files["up"]?.value("strata_up_child_restarts_total", ["process": process]) == 0, "\(process)")
        }
        var series: Set<String> = []
        var described: [String: String] = [:]
        for name in names {
            let exposition = try #require(files[name])
            for sample in exposition.samples {
                let key = sample.name + "\(sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })"
                #expect(series.insert(key).inserted, "\(key) is in two files")
            }
            for (family, type) in exposition.types {
                let description = type + " " + (exposition.help[family] ?? "")
                #expect(described[family, default: description] == description, "\(family) differs between files")
                described[family] = description
            }
        }
        up.send(signal: SIGINT)
        #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
    }

    /// `up.prom` says which children run and how often each was started again: a projector killed
    /// outright shows as down, then counted as restarted and running again; at a stop, all are down.
    /// Before, nothing did: the killed projector's own file went on showing its last figures.
    @Test func upCountsAChildThatCrashedAndWasStartedAgain() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-up-restart")
        defer { try? FileManager.default.removeItem(at: data) }
        let (up, directory) = try Self.up(data, metricsInterval: "0.1")
        defer { up.stop() }
        try up.waitForLine(containing: "project-audit: ready ")
        let path = directory.appendingPathComponent("up.prom").path
        func waitFor(_ what: String, _ condition: (Exposition) -> Bool) throws -> Exposition {
            let deadline = Date().addingTimeInterval(30)
            var last = try readExposition(path)
            while !condition(last) && Date() < deadline {
                usleep(50_000)
                last = try readExposition(path)
            }
            #expect(condition(last), "\(what): \(last.samples)\n\(up.log)")
            return last
        }
        let audit = ["process": "project-audit"]
        _ = try waitFor("all running") { file in
            ["serve", "project-readmodels", "project-audit"].allSatisfy {
                file.value("strata_up_child_running", ["process": $0]) == 1
            }
        }
        let started = try #require(
            up.log.split(separator: "\n").last { $0.contains("started audit (pid ") }?
                .split(separator: "(pid ").last?.prefix { $0.isNumber })
        let pid = try #require(pid_t(String(started)))
        #expect(kill(pid, SIGKILL) == 0)
        // Started again after 1 s: down meanwhile, written every 0.1 s.
        _ = try waitFor("audit down") { $0.value("strata_up_child_running", audit) == 0 }
        let again = try waitFor("audit restarted") {
            $0.value("strata_up_child_running", audit) == 1 && $0.value("strata_up_child_restarts_total", audit) == 1
        }
        #expect(again.value("strata_up_child_restarts_total", ["process": "project-readmodels"]) == 0)
        #expect(again.value("strata_up_child_running", ["process": "serve"]) == 1)

        up.send(signal: SIGINT)
        #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
        let last = try readExposition(path)
        for process in ["serve", "project-readmodels", "project-audit"] {
            #expect(last.value("strata_up_child_running", ["process": process]) == 0, "\(process)")
        }
        #expect(last.value("strata_up_child_restarts_total", audit) == 1)
    }

    /// `up.prom` is written as soon as a child starts or ends, not at the next interval: it was
    /// written at `up`'s start with every child down and said so until the interval came round
    /// (an hour with `--metrics-interval 3600`), while all three ran.
    @Test func upWritesItsFileAsSoonAsAChildStartsOrEnds() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-up-prompt")
        defer { try? FileManager.default.removeItem(at: data) }
        let (up, directory) = try Self.up(data, metricsInterval: "3600")
        defer { up.stop() }
        for name in ["serve", "project-readmodels", "project-audit"] {
            try up.waitForLine(containing: "\(name): ready ")
        }
        let path = directory.appendingPathComponent("up.prom").path
        let running = try readExposition(path)
        for process in ["serve", "project-readmodels", "project-audit"] {
            #expect(running.value("strata_up_child_running", ["process": process]) == 1, "\(process)")
        }
        let started = try #require(
            up.log.split(separator: "\n").last { $0.contains("started audit (pid ") }?
                .split(separator: "(pid ").last?.prefix { $0.isNumber })
        kill(try #require(pid_t(String(started))), SIGTERM)
        try up.waitForLine(containing: "audit stopped on its own (exit code 0) and stays down")
        #expect(try readExposition(path).value("strata_up_child_running", ["process": "project-audit"]) == 0)
        up.send(signal: SIGINT)
        #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
    }

    /// A metrics directory removed while `up` runs is made again before a crashed child starts
    /// again: the child writes its file first and ends with exit 2 when it cannot, so a serve
    /// killed outright stopped the whole system for good (`up` exit 1), where `up` restarts it.
    @Test func aMetricsDirectoryRemovedWhileUpRunsIsMadeAgainForARestartedChild() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-up-removed")
        defer { try? FileManager.default.removeItem(at: data) }
        let (up, directory) = try Self.up(data, metricsInterval: "0.1")
        defer { up.stop() }
        try up.waitForLine(containing: "project-audit: ready ")
        let started = try #require(
            up.log.split(separator: "\n").last { $0.contains("started serve (pid ") }?
                .split(separator: "(pid ").last?.prefix { $0.isNumber })
        // Moved away in one step: removed file by file, a file the processes write meanwhile
        // could fail the removal (EPERM from Foundation, under load).
        try FileManager.default.moveItem(at: directory, to: data.appendingPathComponent("textfile-gone"))
        #expect(kill(try #require(pid_t(String(started))), SIGKILL) == 0)

        let readyAgain = Date().addingTimeInterval(30)
        while up.log.components(separatedBy: "serve: ready ").count < 3 && Date() < readyAgain {
            if up.waitForExit(timeout: 0.05) != nil { break }
        }
        #expect(up.log.components(separatedBy: "serve: ready ").count == 3, "\(up.log)")
        #expect(up.log.contains("the metrics directory \(directory.path) was gone: made it again"), "\(up.log)")
        let written = Date().addingTimeInterval(10)
        let serve = directory.appendingPathComponent("serve.prom").path
        while !FileManager.default.fileExists(atPath: serve) && Date() < written { usleep(50_000) }
        #expect(try readExposition(serve).value("strata_process_start_time_seconds", ["process": "serve"]) != nil)

        up.send(signal: SIGINT)
        #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
    }

    /// `strata up` on `data`, prepared, on free loopback ports, writing its metrics to the
    /// directory it returns every `metricsInterval` seconds.
    static func up(_ data: URL, metricsInterval: String) throws -> (StrataProcess, metrics: URL) {
        try ServiceProcess.prepare(data)
        let directory = data.appendingPathComponent("textfile")
        let endpoints = try ["commands", "events", "history"].flatMap {
            ["--\($0)", "tcp://127.0.0.1:\(try freeLoopbackPort())"]
        }
        let up = try StrataProcess(
            ["up", "--data", data.path, "--key", ServiceProcess.Keys.service, "--metrics-dir", directory.path]
                + ["--metrics-interval", metricsInterval] + endpoints)
        return (up, directory)
    }

    @Test func badObservabilityOptionsAreUsageErrors() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-usage")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        for (arguments, message) in [
            (["--metrics-interval", "5"], "--metrics-interval goes with --metrics-file"),
            (["--metrics-file", "m.prom", "--metrics-interval", "0"], "--metrics-interval must be"),
            (["--log-level", "loud"], "--log-level must be debug, info, warning or error"),
        ] {
            let result = try ChildProcess.strata(["serve", "--data", data.path] + arguments)
            #expect(result.exitCode == 2, "\(arguments)")
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
        let up = try ChildProcess.strata(["up", "--data", data.path, "--metrics-interval", "5"])
        #expect(up.exitCode == 2 && up.stderr.contains("--metrics-interval goes with --metrics-dir"), "\(up.stderr)")
        let environment = try ChildProcess.strata(
            ["serve", "--data", data.path], environment: ["STRATA_LOG_LEVEL": "x"])
        #expect(environment.exitCode == 2, "\(environment.stderr)")
        #expect(environment.stderr.contains("STRATA_LOG_LEVEL must be"), "\(environment.stderr)")
        // A metrics file in a directory that does not exist: refused at start, and the store is left free.
        let missing = data.appendingPathComponent("no-such-dir/serve.prom").path
        let any = "tcp://127.0.0.1:*"
        let result = try ChildProcess.strata(
            ["serve", "--data", data.path, "--metrics-file", missing]
                + ["--commands", any, "--events", any, "--history", any])
        #expect(result.exitCode == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--metrics-file: cannot write"), "\(result.stderr)")
        let service = try ServiceProcess(dataDirectory: data)
        #expect(service.stop() == 0)
    }

    /// A metrics path that names one of the system's files (a slip of `events.db` for
    /// `events.prom`, directly or through a link) is refused at start, and the file is left as it
    /// was: the first write renamed the metrics over it, and the store, a projection or the key
    /// file was gone.
    @Test func aMetricsFileIsNeverWrittenOverOneOfTheSystemsFiles() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-over")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let projector = try StrataProcess(
            ["project", "audit", "--data", data.path, "--events", service.events, "--history", service.history])
        try projector.waitForLine(containing: "caught up through history on start")
        #expect(projector.stop() == 0, "\(projector.log)")
        #expect(service.stop() == 0)
        let link = data.appendingPathComponent("store.prom").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "events.db")

        let any = "tcp://127.0.0.1:*"
        let endpoints = ["--commands", any, "--events", any, "--history", any]
        for (command, path) in [
            (["serve"], data.appendingPathComponent("events.db").path), (["serve"], link),
            (["project", "audit"], data.appendingPathComponent("audit.db").path),
            (["project", "audit"], data.appendingPathComponent("keys.json").path),
        ] {
            let arguments = command + ["--data", data.path, "--metrics-file", path]
                + (command == ["serve"] ? endpoints : Array(endpoints.dropFirst(2)))
            let process = try StrataProcess(arguments)
            let exit = process.waitForExit(timeout: 20)
            if exit == nil { process.stop() }
            #expect(exit == 2, "\(arguments): \(process.log)")
            #expect(
                process.log.contains("which the metrics file must not replace"), "\(arguments): \(process.log)")
        }
        let verify = try ChildProcess.strata(["verify", "--data", data.path])
        #expect(verify.exitCode == 0, "\(verify.stdout)\(verify.stderr)")
        let status = try ChildProcess.strata(["status", "--data", data.path, "--only", "audit"])
        #expect(status.exitCode == 0, "\(status.stdout)\(status.stderr)")
        #expect(try ServiceProcess(dataDirectory: data).stop() == 0)
    }

    /// `--cache-mib` bounds the writer's cache of folded streams: 1,200 loans, each holding its
    /// schedule (some 2 MB in all as `strata_writer_cache_bytes` estimates them), through a serve
    /// given 1 MiB: after the trim before the last batch (one payment) the cache holds no more.
    /// Without the option it kept all of them.
    @Test func cacheMibBoundsTheStreamsTheWriterHolds() throws {
        let data = try ChildProcess.temporaryDirectory("strata-cache-mib")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let file = data.appendingPathComponent("serve.prom").path
        let service = try ServiceProcess(
            dataDirectory: data, arguments: ["--cache-mib", "1", "--metrics-file", file, "--metrics-interval", "3600"])
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "mib", agents: 2, accountsPerAgent: 10, today: Timestamp.now().date)
        let context = try ZMQContext()
        let client = try service.commandClient(context)
        defer { client.close() }
        func exchange(_ bodies: [CommandBody]) throws {
            for body in bodies { try client.send(body.json) }
            for body in bodies {
                let reply = try JSONParser.parse(try #require(try client.receive(timeoutMilliseconds: 30_000)))
                #expect(reply["ok"] == .bool(true), "\(body.type): \(CanonicalJSON.string(reply))")
            }
        }
        try exchange(workload.setup())
        for start in stride(from: 0, to: 1_200, by: 100) {
            try exchange((start..<start + 100).flatMap { Array(workload.loan($0).prefix(2)) })
        }
        try exchange([workload.loan(0)[2]])
        #expect(service.stop() == 0, "\(service.log)")

        let final = try readExposition(file)
        let bytes = try #require(final.value("strata_writer_cache_bytes"))
        #expect(bytes <= Double(1 << 20), "\(bytes) bytes held")
        #expect(try #require(final.value("strata_writer_cache_streams")) < 1_000)
    }

    /// A metrics path where a FIFO is (and no reader), or a device: opening a FIFO to write
    /// waits for a reader, so `serve` hung at its start, before it listened or said why. Each
    /// is refused at start (exit 2) naming what is there, and left as it was.
    @Test func aMetricsFileThatIsNotARegularFileIsRefusedAtStart() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-fifo")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let fifo = data.appendingPathComponent("serve.prom").path
        try #require(mkfifo(fifo, 0o644) == 0)
        let link = data.appendingPathComponent("link.prom").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "serve.prom")

        let any = "tcp://127.0.0.1:*"
        let endpoints = ["--commands", any, "--events", any, "--history", any]
        for (command, path, what) in [
            (["serve"], fifo, "a FIFO"), (["serve"], link, "a FIFO"), (["project", "audit"], fifo, "a FIFO"),
            (["serve"], "/dev/null", "a character device"),
        ] {
            let arguments = command + ["--data", data.path, "--metrics-file", path]
                + (command == ["serve"] ? endpoints : Array(endpoints.dropFirst(2)))
            let process = try StrataProcess(arguments)
            let exit = process.waitForExit(timeout: 20)
            if exit == nil { process.stop() }
            #expect(exit == 2, "\(arguments): \(process.log)")
            #expect(process.log.contains("--metrics-file: \(path) is \(what): "), "\(arguments): \(process.log)")
        }
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    }

    /// Refused before anything is made: `serve` used to make a new store, its checkpoint key and
    /// its key store in a fresh data directory, and only then refuse the metrics file.
    @Test func aMetricsFileRefusedAtStartLeavesAFreshDataDirectoryAsItWas() throws {
        let data = try ChildProcess.temporaryDirectory("strata-metrics-fresh")
        defer { try? FileManager.default.removeItem(at: data) }
        let made = try ChildProcess.strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data.path])
        try #require(made.exitCode == 0, "\(made.stderr)")
        let before = try FileManager.default.contentsOfDirectory(atPath: data.path).sorted()

        let any = "tcp://127.0.0.1:*"
        for command in [["serve", "--commands", any], ["project", "readmodels"], ["project", "audit"]] {
            let arguments = command + ["--events", any, "--history", any, "--data", data.path, "--metrics-file", "/dev/null"]
            let process = try StrataProcess(arguments)
            let exit = process.waitForExit(timeout: 20)
            if exit == nil { process.stop() }
            #expect(exit == 2, "\(arguments): \(process.log)")
            #expect(process.log.contains("/dev/null is a character device"), "\(arguments): \(process.log)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: data.path).sorted() == before, "\(arguments)")
        }
    }
}

/// The file parsed strictly; a failure names the text.
func readExposition(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Exposition {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    do {
        return try Exposition(text)
    } catch {
        Issue.record("\(path) is not a valid exposition: \(error)\n\(text)", sourceLocation: sourceLocation)
        throw error
    }
}

/// The file's inode and its whole contents, from one open.
func readWithInode(_ path: String) throws -> (UInt64, String) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw ServiceProcessError("cannot open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var status = stat()
    guard fstat(fd, &status) == 0 else { throw ServiceProcessError("cannot stat \(path)") }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else { throw ServiceProcessError("cannot read \(path)") }
        if count == 0 { break }
        bytes += buffer[0..<count]
    }
    return (UInt64(status.st_ino), String(decoding: bytes, as: UTF8.self))
}
