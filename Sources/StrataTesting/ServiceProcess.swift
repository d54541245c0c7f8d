import Bus
import EventStore
import Foundation
import StrataCore
import Synchronization

/// A real `strata serve` child process on free loopback ports, for end-to-end tests.
///
/// `prepare` makes a data directory the way an operator would (`strata keys new`,
/// `strata admin bootstrap`); `start` launches the service with every endpoint on port
/// `*` and waits for its "ready" line, which names the ports the system chose.
public final class ServiceProcess: Sendable {
    /// The keys `prepare` creates: one for everything a service does, and one per scope.
    public enum Keys {
        public static let service = "svc"
        public static let commandsOnly = "cmd-only"
        public static let historyOnly = "hist-only"
        /// Narrowed to act only for AGENT actors.
        public static let agentsOnly = "agents-only"
    }

    /// The first admin `prepare` registers.
    public static let admin = "root"

    public let dataDirectory: URL
    public let commands: String
    public let events: String
    public let history: String
    /// The `strata serve` child.
    public let process: StrataProcess

    /// A data directory with the four keys and the first admin; with `curve`, every key has a
    /// CURVE pair and the key file the service's, so the service runs CURVE.
    public static func prepare(_ dataDirectory: URL, curve: Bool = false) throws {
        let data = ["--data", dataDirectory.path]
        for (id, scopes, extra) in [
            (Keys.service, "commands,history", [String]()), (Keys.commandsOnly, "commands", []),
            (Keys.historyOnly, "history", []), (Keys.agentsOnly, "commands", ["--roles", "AGENT"]),
        ] {
            let made = try ChildProcess.strata(
                ["keys", "new", id, "--scope", scopes] + extra + data + (curve ? ["--curve"] : []))
            guard made.exitCode == 0 else { throw ServiceProcessError("keys new \(id): \(made.stderr)") }
        }
        let admin = try ChildProcess.strata(
            ["admin", "bootstrap", "--id", admin, "--username", "root", "--email", "root@example.com"] + data)
        guard admin.exitCode == 0 else { throw ServiceProcessError("admin bootstrap: \(admin.stderr)") }
    }

    /// Loopback ports chosen in advance, for a service that must come back where it was (its
    /// projectors and clients reconnect to the same endpoints).
    public struct Ports: Sendable, Equatable {
        public let commands: Int
        public let events: Int
        public let history: Int

        /// Three different ports nothing listens on right now.
        public static func free() throws -> Ports {
            Ports(commands: try freeLoopbackPort(), events: try freeLoopbackPort(), history: try freeLoopbackPort())
        }
    }

    /// Starts `strata serve` on `dataDirectory` and returns once it is ready: on `ports`, or
    /// on ports the system chooses; the events endpoint at `eventsEndpoint` when given.
    public init(
        dataDirectory: URL, arguments: [String] = [], environment: [String: String] = [:], ports: Ports? = nil,
        eventsEndpoint: String? = nil
    ) throws {
        self.dataDirectory = dataDirectory
        func endpoint(_ port: Int?) -> String { "tcp://127.0.0.1:" + (port.map(String.init) ?? "*") }
        process = try StrataProcess(
            ["serve", "--data", dataDirectory.path, "--commands", endpoint(ports?.commands)]
                + ["--events", eventsEndpoint ?? endpoint(ports?.events), "--history", endpoint(ports?.history)]
                + arguments,
            environment: environment)
        let ready = try process.waitForLine(containing: " ready ")
        func field(_ name: String) -> String {
            ready.split(separator: " ").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) } ?? ""
        }
        commands = field("commands")
        events = field("events")
        history = field("history")
    }

    public var processIdentifier: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }

    /// The service's peak resident memory so far in KiB (VmHWM), while it runs.
    public var peakResidentKiB: Int? { statusKiB("VmHWM") }

    /// The service's resident memory now in KiB (VmRSS), while it runs.
    public var residentKiB: Int? { statusKiB("VmRSS") }

    /// A field of `/proc/PID/status` counted in KiB.
    private func statusKiB(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(processIdentifier)/status", encoding: .utf8) else {
            return nil
        }
        let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
    }

    /// What the service logged so far.
    public var log: String { process.log }

    public func send(signal: Int32) {
        process.send(signal: signal)
    }

    /// Waits for the process to end; its exit code, or nil if it still runs after `timeout`.
    public func waitForExit(timeout: TimeInterval = 30) -> Int32? {
        process.waitForExit(timeout: timeout)
    }

    /// Stops the service with SIGTERM and returns its exit code.
    @discardableResult
    public func stop() -> Int32? {
        process.stop()
    }

    /// The data directory's key file.
    public func keyFile() throws -> KeyFile {
        try KeyFile(json: try Data(contentsOf: dataDirectory.appendingPathComponent("keys.json")))
    }

    /// A key's secret from the data directory's key file.
    public func secret(of keyId: String) throws -> [UInt8] {
        guard let key = try keyFile().key(keyId) else { throw ServiceProcessError("no key \(keyId)") }
        return key.secret
    }

    /// The CURVE keys a client signing with `keyId` connects with; nil when the service runs
    /// plain TCP.
    public func curveKeys(of keyId: String) throws -> CurveClientKeys? {
        let keys = try keyFile()
        guard let key = keys.key(keyId) else { throw ServiceProcessError("no key \(keyId)") }
        return try keys.curveClientKeys(for: key)
    }

    /// The data directory's event store, opened read-only (beside the running service).
    public func store() throws -> SQLiteEventStore {
        try SQLiteEventStore(readingAt: dataDirectory.appendingPathComponent("events.db").path)
    }

    /// A request as a DEALER sends it, `["", header, body]`, signed now (or at `timestamp`)
    /// under `keyId` with the secret of `secretOf` (by default `keyId`'s own).
    public func signedFrames(
        _ body: [UInt8], key keyId: String = Keys.service, secretOf: String? = nil, timestamp: Int64? = nil
    ) throws -> [[UInt8]] {
        let header = RequestSignature.header(
            secret: try secret(of: secretOf ?? keyId), keyId: keyId,
            timestamp: timestamp ?? Timestamp.now().secondsSinceEpoch, body: body)
        return [[], header.json, body]
    }

    /// A pipelined client of the commands endpoint signing with `keyId` (over CURVE when the
    /// service runs it).
    public func commandClient(_ context: ZMQContext, key keyId: String = Keys.service) throws -> SignedClient {
        try SignedClient(
            context, endpoint: commands, keyId: keyId, secret: secret(of: keyId), curve: curveKeys(of: keyId))
    }

    /// A client of the history endpoint signing with `keyId` (over CURVE when the service runs it).
    public func historyClient(_ context: ZMQContext, key keyId: String = Keys.service) throws -> SignedClient {
        try SignedClient(
            context, endpoint: history, keyId: keyId, secret: secret(of: keyId), curve: curveKeys(of: keyId))
    }
}

public struct ServiceProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
