import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing
import Workloads

extension FaultSuiteTests {
    /// The store runs out of room under load: on a size-limited tmpfs (when the test may mount
    /// one), and at `strata serve --max-store-bytes`. Commands are refused INTERNAL (never a
    /// fake acceptance), nothing acknowledged is lost, the chain verifies, the service stays
    /// up; once there is room again the refused commands are decided afresh (they were never
    /// journaled) and new ones are accepted.
    @Suite struct DiskFull {
        enum Limit: String, CustomStringConvertible {
            /// The data directory on a tmpfs of 1.5 MiB, grown to 64 MiB under the running service.
            case tmpfs
            /// `--max-store-bytes`: the store's quota, raised by a restart.
            case quota

            var description: String { rawValue }
        }

        @Test(arguments: [Limit.tmpfs, .quota])
        func aFullStoreRefusesLosesNothingAndRecovers(_ requested: Limit) throws {
            let data = try ChildProcess.temporaryDirectory("strata-disk-full")
            defer { try? FileManager.default.removeItem(at: data) }
            var limit = requested
            let tmpfs = requested == .tmpfs ? Tmpfs(mountingAt: data, size: "1536k") : nil
            defer { tmpfs?.unmount() }
            if requested == .tmpfs && tmpfs == nil {
                print("disk full: cannot mount a tmpfs here (not root?); the store's quota stands in")
                limit = .quota
            }
            try ServiceProcess.prepare(data)
            let storePath = data.appendingPathComponent("events.db").path
            let quota = Int64(try Data(contentsOf: URL(fileURLWithPath: storePath)).count) + 768 * 1024
            let quotaArguments = limit == .quota ? ["--max-store-bytes", "\(quota)"] : []
            var service = try ServiceProcess(dataDirectory: data, arguments: quotaArguments)
            let context = try ZMQContext()
            let workload = LendingWorkload(
                admin: ServiceProcess.admin, prefix: "full", agents: 4, accountsPerAgent: 25,
                today: Timestamp.now().date)
            func exchange(_ bodies: [CommandBody]) throws -> [JSONValue] {
                try System.exchange(
                    bodies, endpoint: service.commands, secret: service.secret(of: ServiceProcess.Keys.service),
                    context: context)
            }
            try System.send(
                workload.setup(), endpoint: service.commands,
                secret: service.secret(of: ServiceProcess.Keys.service), context: context)

            // Loan requests on the set-up's accounts, each independent of the others, 200 at a
            // time, until a whole round is refused: the store is full.
            var acknowledged: [String: [AppendedEvent]] = [:]
            var refused: [CommandBody] = []
            var codes: [String: Int] = [:]
            var next = 0
            while true {
                let bodies = (next..<(next + 200)).map { workload.loan($0)[0] }
                next += 200
                var refusedThisRound = 0
                for (body, reply) in zip(bodies, try exchange(bodies)) {
                    #expect(reply["id"]?.stringValue == body.id)
                    if reply["ok"] == .bool(true) {
                        #expect(reply["duplicate"] == .bool(false))
                        acknowledged[body.id] = CommandLedger.events(in: reply)
                    } else {
                        let code = reply["error"]?["code"]?.stringValue ?? "?"
                        let reason = reply["error"]?["reason"]?.stringValue ?? "?"
                        codes["\(code) \(reason)", default: 0] += 1
                        #expect(
                            code == "INTERNAL" && reason == "STORE_FAILURE",
                            "\(body.id): \(CanonicalJSON.string(reply))")
                        refused.append(body)
                        refusedThisRound += 1
                    }
                }
                if refusedThisRound == bodies.count { break }
                try #require(next < 40_000, "the store never filled")
            }
            #expect(service.isRunning, "the service stays up on a full store")
            let headWhenFull = try service.store().head()

            // Full, yet still answering: a retry of an acknowledged command is a duplicate (the
            // journal is read, nothing written), and the store holds everything acknowledged.
            let retried = Array(acknowledged.keys.sorted().prefix(50))
            let retries = (0..<next).map { workload.loan($0)[0] }.filter { retried.contains($0.id) }
            for (body, reply) in zip(retries, try exchange(retries)) {
                #expect(reply["duplicate"] == .bool(true), "\(body.id) while full: \(CanonicalJSON.string(reply))")
                #expect(CommandLedger.events(in: reply) == acknowledged[body.id])
            }
            try expectHolds(acknowledged, refused: refused, service.store())
            let refusedLog = service.log.split(separator: "\n").filter { $0.contains("the store refused a batch") }
            #expect(refusedLog.count >= 1, "\(service.log)")

            // Room again: on the tmpfs, under the running service; with the quota, by a restart.
            switch limit {
            case .tmpfs: try #require(tmpfs?.remount(size: "64m") == true)
            case .quota:
                #expect(service.stop() == 0, "\(service.log)")
                service = try ServiceProcess(dataDirectory: data, arguments: ["--max-store-bytes", "\(quota * 16)"])
            }
            let again = try exchange(refused)
            for (body, reply) in zip(refused, again) {
                #expect(reply["ok"] == .bool(true), "\(body.id) after space returned: \(CanonicalJSON.string(reply))")
                #expect(reply["duplicate"] == .bool(false), "\(body.id) was never journaled, so it is decided now")
                acknowledged[body.id] = CommandLedger.events(in: reply)
            }
            let more = (next..<(next + 200)).map { workload.loan($0)[0] }
            for (body, reply) in zip(more, try exchange(more)) {
                #expect(reply["ok"] == .bool(true), "\(body.id): \(CanonicalJSON.string(reply))")
                acknowledged[body.id] = CommandLedger.events(in: reply)
            }
            try expectHolds(acknowledged, refused: [], service.store())
            if limit == .tmpfs {
                #expect(service.log.contains("the store records commands again"), "\(service.log)")
            }
            let head = try service.store().head()
            #expect(service.stop() == 0, "\(service.log)")
            // The WAL, which took commits while the disk was full and commits that failed on it,
            // checkpoints into the file completely, and the file is sound.
            let file = try SQLiteConnection(path: storePath, mode: .readWrite)
            let checkpoint = try file.statement("PRAGMA wal_checkpoint(TRUNCATE)")
            #expect(try checkpoint.step() && checkpoint.int64(0) == 0 && checkpoint.int64(1) == checkpoint.int64(2))
            checkpoint.reset()
            #expect(try file.scalarText("PRAGMA quick_check") == "ok")
            file.close()
            print(
                "disk full (\(limit)): the service logged: "
                    + (refusedLog.first.map { String($0.split(separator: " ", maxSplits: 2)[2]) } ?? ""))
            print(
                "disk full (\(limit)\(limit == .quota ? " \(quota) bytes" : " 1536 KiB")): \(next) loan requests sent, "
                    + "\(next - refused.count) acknowledged before it was full (head \(headWhenFull)), "
                    + "\(refused.count) refused \(codes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }), "
                    + "\(retries.count) retries answered as duplicates while full; after space returned the "
                    + "\(refused.count) refused ones decided afresh and \(more.count) more accepted; head \(head), "
                    + "chain intact, the WAL checkpointed whole after the stop")
        }

        /// The store holds every acknowledged command with its events, none of the refused
        /// ones, and nothing else: the chain verifies and positions run 1…head.
        private func expectHolds(
            _ acknowledged: [String: [AppendedEvent]], refused: [CommandBody], _ store: SQLiteEventStore,
            sourceLocation: SourceLocation = #_sourceLocation
        ) throws {
            #expect(try store.verify().isIntact, sourceLocation: sourceLocation)
            for (id, events) in acknowledged {
                guard case .accepted(let journaled)? = try store.journalEntry(commandId: id)?.outcome else {
                    Issue.record("\(id) was acknowledged and is not journaled", sourceLocation: sourceLocation)
                    continue
                }
                #expect(journaled == events, "\(id)", sourceLocation: sourceLocation)
                for event in events {
                    #expect(
                        try store.events(after: event.position - 1, limit: 1).first?.type == event.type,
                        sourceLocation: sourceLocation)
                }
            }
            for body in refused {
                #expect(
                    try store.journalEntry(commandId: body.id) == nil, "\(body.id) was refused and is journaled",
                    sourceLocation: sourceLocation)
            }
        }
    }
}

/// A size-limited tmpfs mounted over a directory, for as long as a test needs a small disk.
/// Mounting needs root (CAP_SYS_ADMIN); where it is refused the caller does without.
struct Tmpfs {
    let directory: URL

    init?(mountingAt directory: URL, size: String) {
        self.directory = directory
        guard Self.mount(["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", directory.path]) else { return nil }
    }

    /// Grows (or shrinks) the file system under whatever has files open on it.
    func remount(size: String) -> Bool {
        Self.mount(["-o", "remount,size=\(size)", directory.path])
    }

    func unmount() {
        // Lazily: a service still running (a test that failed half-way) keeps its files until it ends.
        _ = try? ChildProcess.run(URL(fileURLWithPath: "/bin/umount"), ["-l", directory.path])
    }

    private static func mount(_ arguments: [String]) -> Bool {
        guard getuid() == 0, let result = try? ChildProcess.run(URL(fileURLWithPath: "/bin/mount"), arguments) else {
            return false
        }
        return result.exitCode == 0
    }
}
