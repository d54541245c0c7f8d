import Bus
import CommandService
import Dispatch
import EventStore
import Foundation
import ProjectorRuntime
import StrataCore
import StrataTesting
import Synchronization
import Testing
import Workloads

/// A data directory, a running `strata serve`, and what the tests do with them.
final class System {
    let data: URL
    private(set) var service: ServiceProcess
    private let serveArguments: [String]
    /// Where the service listens, when it must come back to the same endpoints after a restart.
    let ports: ServiceProcess.Ports?
    let workload: LendingWorkload
    let context: ZMQContext

    /// - Parameter fixedPorts: the service listens on ports chosen now and keeps them across
    ///   restarts, as an operator's configuration would; otherwise each start takes free ones.
    init(_ label: String, serveArguments: [String] = [], fixedPorts: Bool = false) throws {
        data = try ChildProcess.temporaryDirectory("strata-projector-\(label)")
        try ServiceProcess.prepare(data)
        ports = fixedPorts ? try ServiceProcess.Ports.free() : nil
        service = try ServiceProcess(dataDirectory: data, arguments: serveArguments, ports: ports)
        self.serveArguments = serveArguments
        workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: label, agents: 4, accountsPerAgent: 10, today: Timestamp.now().date)
        context = try ZMQContext()
    }

    deinit {
        service.stop()
        try? FileManager.default.removeItem(at: data)
    }

    var storePath: String { data.appendingPathComponent("events.db").path }

    /// Stops the service (if it runs) and starts it again on the same data: on the same ports
    /// when they are fixed, else on new ones.
    func restartService() throws {
        service.stop()
        service = try ServiceProcess(dataDirectory: data, arguments: serveArguments, ports: ports)
    }

    /// A copy of the store as it is now, taken by `strata backup` while the service runs, as an
    /// operator's backup is.
    func backUpStore() throws -> URL {
        // A fresh name: a backup makes its directory itself.
        let backup = try ChildProcess.temporaryDirectory("strata-backup")
        try FileManager.default.removeItem(at: backup)
        let result = try ChildProcess.strata(["backup", "--data", data.path, "--output", backup.path])
        guard result.exitCode == 0 else { throw ServiceProcessError("backup: \(result.stdout)\(result.stderr)") }
        return backup
    }

    /// Puts `backup` (from `backUpStore`) in place of the store, as docs/cli.md says to restore:
    /// with the service stopped, the store's `-wal` and `-shm` gone with it.
    func restoreStore(_ backup: URL) throws {
        service.stop()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: storePath + suffix) }
        try FileManager.default.copyItem(atPath: backup.appendingPathComponent("events.db").path, toPath: storePath)
        try restartService()
    }

    /// `strata project NAME` against this system's service.
    func projector(_ name: String, _ extra: [String] = []) throws -> StrataProcess {
        try StrataProcess(
            ["project", name, "--data", data.path, "--events", service.events, "--history", service.history]
                + ["--key", ServiceProcess.Keys.service] + extra)
    }

    /// Sends every body pipelined and requires every one accepted.
    func send(_ bodies: [CommandBody]) throws {
        try System.send(
            bodies, endpoint: service.commands, secret: service.secret(of: ServiceProcess.Keys.service),
            context: context)
    }

    static func send(_ bodies: [CommandBody], endpoint: String, secret: [UInt8], context: ZMQContext) throws {
        let replies = try exchange(bodies, endpoint: endpoint, secret: secret, context: context)
        for (body, reply) in zip(bodies, replies) where reply["ok"] != .bool(true) {
            throw ServiceProcessError("\(body.id) refused: \(CanonicalJSON.string(reply))")
        }
    }

    /// Sends every body pipelined, up to 500 ahead of their replies, and returns the replies in
    /// the order sent; throws when one does not come within a minute.
    static func exchange(
        _ bodies: [CommandBody], endpoint: String, secret: [UInt8], context: ZMQContext
    ) throws -> [JSONValue] {
        let client = try SignedClient(context, endpoint: endpoint, keyId: ServiceProcess.Keys.service, secret: secret)
        defer { client.close() }
        var sent = 0
        var replies: [JSONValue] = []
        replies.reserveCapacity(bodies.count)
        while replies.count < bodies.count {
            while sent < bodies.count && sent - replies.count < 500 {
                try client.send(bodies[sent].json)
                sent += 1
            }
            guard let reply = try client.receive(timeoutMilliseconds: 60_000) else {
                throw ServiceProcessError("no reply to \(bodies[replies.count].id)")
            }
            replies.append(try JSONParser.parse(reply))
        }
        return replies
    }

    /// Sends and returns the commands acknowledged a second, from the first send to the last reply.
    func timedSend(_ bodies: [CommandBody]) throws -> Double {
        let started = Date()
        try send(bodies)
        return Double(bodies.count) / max(Date().timeIntervalSince(started), 0.001)
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
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let checkpoint = try self.checkpoint(name)
            if checkpoint >= position { return }
            guard Date() < deadline else {
                throw ServiceProcessError("\(name) did not reach \(position): at \(checkpoint)")
            }
            usleep(50_000)
        }
    }

    /// The projection file's checkpoint (0 before the file exists); throws when it stopped at an event.
    func checkpoint(_ name: String) throws -> Int64 {
        guard let snapshot = try ProjectionSnapshot(path: data.appendingPathComponent("\(name).db").path) else {
            return 0
        }
        if let stop = snapshot.stop { throw ServiceProcessError("\(name) stopped: \(stop)") }
        return snapshot.checkpoint
    }

    /// `strata rebuild NAME --compare` says the live file equals a rebuild from the store.
    func expectEqualToRebuild(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try ChildProcess.strata(["rebuild", name, "--compare", "--data", data.path])
        #expect(result.exitCode == 0, "\(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.contains("equal:"), "\(result.stdout)", sourceLocation: sourceLocation)
    }

    /// Where a projector ends after a fault: its checkpoint is the store's head exactly, and
    /// its file equals a rebuild from the store.
    func expectConverged(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let head = try service.store().head()
        try waitForCheckpoint(name, head)
        #expect(try checkpoint(name) == head, "\(name) checkpoint is the head", sourceLocation: sourceLocation)
        try expectEqualToRebuild(name, sourceLocation: sourceLocation)
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
