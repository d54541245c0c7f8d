import Bus
import EventStore
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing
import Workloads

/// Signed checkpoints end to end (issue "signed checkpoints"; `strata serve --help`,
/// `strata verify --help`): the real service signs its head, `strata verify` checks the
/// signatures, and a chain rewritten with every hash recomputed is caught by both.
@Suite struct CheckpointProcessTests {
    @Test func theServiceSignsItsHeadAtStopAndARewrittenChainIsCaught() throws {
        let data = try ChildProcess.temporaryDirectory("strata-checkpoints")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        // Interval 0: sign only at the graceful stop, so exactly one checkpoint is expected.
        let service = try ServiceProcess(dataDirectory: data, arguments: ["--checkpoint-interval", "0"])
        defer { service.stop() }
        try sendLoan(to: service, prefix: "cp")
        #expect(try service.store().lastCheckpoint() == nil, "nothing is signed before the stop: \(service.log)")
        #expect(service.stop() == 0, "\(service.log)")

        // The key pair was made on this first start, and its public half logged and published.
        let publicKey = try String(contentsOf: data.appendingPathComponent("checkpoint.pub"), encoding: .utf8)
        #expect(publicKey.utf8.count == 65 && publicKey.hasSuffix("\n"), "\(publicKey)")
        let hex = String(publicKey.dropLast())
        #expect(service.log.contains("created the checkpoint key") && service.log.contains(hex), "\(service.log)")
        #expect(try permissions(data.appendingPathComponent("checkpoint.key").path) == 0o600)
        #expect(try permissions(data.appendingPathComponent("checkpoint.pub").path) == 0o644)

        let store = try SQLiteEventStore(readingAt: data.appendingPathComponent("events.db").path)
        let head = try store.head()
        #expect(head >= 6)
        let signed = try #require(try store.lastCheckpoint())
        #expect(signed.position == head)
        #expect(signed.publicKey == hex)

        let verify = try ChildProcess.strata(["verify", "--format", "json", "--data", data.path])
        #expect(verify.exitCode == 0, "\(verify.stdout)\(verify.stderr)")
        let report = try JSONParser.parse(verify.stdout)
        #expect(report["intact"] == true)
        #expect(report["eventsVerified"] == .integer(head))
        #expect(report["checkpointsVerified"] == 1)
        #expect(report["lastSignedPosition"] == .integer(head))
        #expect(report["lastSignedAt"] == .string(signed.signedAt))
        #expect(report["unsignedEvents"] == 0)
        #expect(report["publicKey"] == .string(hex))

        // Rewrite the chain end to end from the first event with an amount, every hash
        // recomputed: the chain alone is consistent again, the signature at the head is not.
        let path = data.appendingPathComponent("events.db").path
        let first = try rewriteFromFirstAmount(path)
        var chainOnly = ChainVerifier()
        for event in try store.events(after: 0, limit: Int.max) { chainOnly.check(event) }
        #expect(chainOnly.report().isIntact, "the rewrite from \(first) recomputed every hash")

        let broken = try ChildProcess.strata(["verify", "--data", data.path])
        #expect(broken.exitCode == 1, "\(broken.stdout)\(broken.stderr)")
        #expect(broken.stdout.hasPrefix("BROKEN at position \(head): CHECKPOINT_MISMATCH: "), "\(broken.stdout)")

        // And the service refuses to sign on from a history that is not the signed one.
        let any = "tcp://127.0.0.1:*"
        let refused = try StrataProcess(
            ["serve", "--data", data.path, "--commands", any, "--events", any, "--history", any])
        defer { refused.stop() }
        #expect(refused.waitForExit(timeout: 30) == 1, "\(refused.log)")
        #expect(
            refused.log.contains("the chain no longer matches the signed checkpoint at \(head)")
                && refused.log.contains("strata verify"), "\(refused.log)")
        #expect(!refused.log.contains(" ready "))

        // The same history restored into a new data directory: refused before anything is
        // made beside it, neither a key store for personal data nor a checkpoint key.
        let restored = try ChildProcess.temporaryDirectory("strata-checkpoints-restored")
        defer { try? FileManager.default.removeItem(at: restored) }
        // With the WAL, where the rewrite may still be while this test's reader is open.
        for name in ["keys.json", "events.db", "events.db-wal", "checkpoint.pub"]
        where FileManager.default.fileExists(atPath: data.appendingPathComponent(name).path) {
            try FileManager.default.copyItem(
                at: data.appendingPathComponent(name), to: restored.appendingPathComponent(name))
        }
        let elsewhere = try StrataProcess(
            ["serve", "--data", restored.path, "--commands", any, "--events", any, "--history", any,
             "--checkpoint-key", data.appendingPathComponent("checkpoint.key").path])
        defer { elsewhere.stop() }
        #expect(elsewhere.waitForExit(timeout: 30) == 1, "\(elsewhere.log)")
        #expect(elsewhere.log.contains("the chain no longer matches the signed checkpoint at \(head)"), "\(elsewhere.log)")
        let made = try FileManager.default.contentsOfDirectory(atPath: restored.path)
        #expect(!made.contains { $0.hasPrefix("subject-keys.db") }, "\(made)")
    }

    /// A crash leaves the last events unsigned; the next start checks that they still chain
    /// from the last checkpoint before it signs them, and refuses a tail changed meanwhile.
    @Test func anUnsignedTailChangedWhileTheServiceWasDownIsRefusedAtStart() throws {
        let data = try ChildProcess.temporaryDirectory("strata-checkpoint-tail")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let first = try ServiceProcess(dataDirectory: data, arguments: ["--checkpoint-interval", "0"])
        try sendLoan(to: first, prefix: "t1")
        #expect(first.stop() == 0, "\(first.log)")
        let signed = try #require(try first.store().lastCheckpoint()).position

        let second = try ServiceProcess(dataDirectory: data, arguments: ["--checkpoint-interval", "0"])
        try sendLoan(to: second, prefix: "t2")
        second.send(signal: SIGKILL)
        _ = second.waitForExit()
        let store = try SQLiteEventStore(readingAt: data.appendingPathComponent("events.db").path)
        #expect(try store.lastCheckpoint()?.position == signed)
        let head = try store.head()
        #expect(head > signed + 2)

        // Restarted untouched, it comes up (and would sign the tail at its stop).
        let third = try ServiceProcess(dataDirectory: data, arguments: ["--checkpoint-interval", "0"])
        #expect(third.stop() == 0, "\(third.log)")
        #expect(try store.lastCheckpoint()?.position == head)

        // Changed without its hash recomputed, an event after the new last checkpoint stops the next start.
        let fourth = try ServiceProcess(dataDirectory: data, arguments: ["--checkpoint-interval", "0"])
        try sendLoan(to: fourth, prefix: "t3")
        fourth.send(signal: SIGKILL)
        _ = fourth.waitForExit()
        let tampered = head + 2
        let c = try SQLiteConnection(path: data.appendingPathComponent("events.db").path, mode: .readWrite)
        try c.statement("UPDATE events SET recorded_at = replace(recorded_at, 'Z', '1Z') WHERE position = ?")
            .run([.integer(tampered)])
        c.close()
        let refused = try serveExpectingRefusal(data, environment: [:])
        #expect(refused.code == 1, "\(refused.log)")
        #expect(
            refused.log.contains("the events after the signed checkpoint at \(head) do not chain from it")
                && refused.log.contains("position \(tampered): HASH_MISMATCH"), "\(refused.log)")
    }

    @Test func whileRunningTheHeadIsSignedEveryInterval() throws {
        let data = try ChildProcess.temporaryDirectory("strata-checkpoint-interval")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data, arguments: ["--checkpoint-interval", "1"])
        defer { service.stop() }
        try sendLoan(to: service, prefix: "iv")
        let store = try service.store()
        let head = try store.head()
        let deadline = Date().addingTimeInterval(20)
        while try store.lastCheckpoint()?.position != head, Date() < deadline { usleep(100_000) }
        #expect(try store.lastCheckpoint()?.position == head, "no checkpoint at \(head) while running: \(service.log)")
        #expect(service.isRunning)
        // The head did not move since: the stop signs nothing new.
        let signedWhileRunning = try store.checkpoints(after: 0, limit: 100)
        #expect(service.stop() == 0)
        #expect(try store.checkpoints(after: 0, limit: 100) == signedWhileRunning)
    }

    @Test func aCheckpointKeyOthersMayReadOrThatIsMalformedIsRefused() throws {
        let data = try ChildProcess.temporaryDirectory("strata-checkpoint-key")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let keyPath = data.appendingPathComponent("elsewhere.key").path
        let made = try ChildProcess.strata(["keys", "checkpoint", "--data", data.path, "--checkpoint-key", keyPath])
        #expect(made.exitCode == 0, "\(made.stderr)")

        chmod(keyPath, 0o640)
        let open = try serveExpectingRefusal(data, environment: ["STRATA_CHECKPOINT_KEY": keyPath])
        #expect(open.code == 2)
        #expect(open.log.contains("has mode 0640") && open.log.contains("chmod 600"), "\(open.log)")

        chmod(keyPath, 0o600)
        try Data(#"{"publicKey":"00"}"#.utf8).write(to: URL(fileURLWithPath: keyPath))
        chmod(keyPath, 0o600)
        let malformed = try serveExpectingRefusal(data, environment: ["STRATA_CHECKPOINT_KEY": keyPath])
        #expect(malformed.code == 2)
        #expect(malformed.log.contains("the checkpoint key \(keyPath) is malformed"), "\(malformed.log)")

        // One that cannot be read says why, whatever its mode: a directory is no file to `chmod 600`.
        try FileManager.default.removeItem(atPath: keyPath)
        for mode in [0o755, 0o700] as [mode_t] {
            try FileManager.default.createDirectory(atPath: keyPath, withIntermediateDirectories: false)
            chmod(keyPath, mode)
            let directory = try serveExpectingRefusal(data, environment: ["STRATA_CHECKPOINT_KEY": keyPath])
            #expect(directory.code == 2)
            #expect(
                directory.log.contains("cannot read the checkpoint key \(keyPath): Is a directory"),
                "mode \(String(mode, radix: 8)): \(directory.log)")
            try FileManager.default.removeItem(atPath: keyPath)
        }

        // The default key is absent but its public half is there: lost, not new. Refused.
        let lost = try serveExpectingRefusal(data, environment: [:])
        #expect(lost.code == 2)
        #expect(lost.log.contains("restore the key"), "\(lost.log)")
        #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("checkpoint.key").path))
    }

    /// A backup restored on a new machine with the key file alone: the store's checkpoints are
    /// signed by a key that is not there. `serve` refuses to make a new one, naming the key it
    /// needs, where it made one, signed on with it, and left a store whose every earlier
    /// checkpoint `strata verify` then called UNTRUSTED_KEY. With the key put in place, it starts,
    /// and the store verifies.
    @Test func aStoreSignedByAKeyThatIsNotThereGetsNoNewKey() throws {
        let data = try ChildProcess.temporaryDirectory("strata-checkpoint-moved")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data, arguments: ["--checkpoint-interval", "0"])
        defer { service.stop() }
        try sendLoan(to: service, prefix: "mv")
        #expect(service.stop() == 0, "\(service.log)")
        let backup = data.appendingPathComponent("backup").path
        let made = try ChildProcess.strata(["backup", "--data", data.path, "--output", backup])
        #expect(made.exitCode == 0, "\(made.stderr)")

        let elsewhere = data.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false)
        try FileManager.default.copyItem(
            at: data.appendingPathComponent("keys.json"), to: elsewhere.appendingPathComponent("keys.json"))
        let restored = try ChildProcess.strata(["restore", "--data", elsewhere.path, "--from", backup])
        #expect(restored.exitCode == 0, "\(restored.stdout)\(restored.stderr)")
        let publicKey = try String(contentsOf: data.appendingPathComponent("checkpoint.pub"), encoding: .utf8)
        let refused = try serveExpectingRefusal(elsewhere, environment: [:])
        #expect(refused.code == 2, "\(refused.log)")
        #expect(refused.log.contains("signed by the key \(publicKey.dropLast())"), "\(refused.log)")
        for file in ["checkpoint.key", "checkpoint.pub"] {
            #expect(!FileManager.default.fileExists(atPath: elsewhere.appendingPathComponent(file).path))
            try FileManager.default.copyItem(
                at: data.appendingPathComponent(file), to: elsewhere.appendingPathComponent(file))
        }

        let moved = try ServiceProcess(dataDirectory: elsewhere, arguments: ["--checkpoint-interval", "0"])
        defer { moved.stop() }
        try sendLoan(to: moved, prefix: "mv2")
        #expect(moved.stop() == 0, "\(moved.log)")
        let verify = try ChildProcess.strata(["verify", "--data", elsewhere.path])
        #expect(verify.exitCode == 0, "\(verify.stdout)\(verify.stderr)")
    }
}

/// Registers an agent and an account, then one loan's request, approval and payment.
private func sendLoan(to service: ServiceProcess, prefix: String) throws {
    let workload = LendingWorkload(
        admin: ServiceProcess.admin, prefix: prefix, agents: 1, accountsPerAgent: 1, today: Timestamp.now().date)
    let context = try ZMQContext()
    let client = try service.commandClient(context)
    defer { client.close() }
    for body in workload.setup() + workload.loan(0) {
        let reply = try JSONParser.parse(try #require(try client.request(body.json), "no reply: \(service.log)"))
        #expect(reply["ok"] == .bool(true), "\(reply)")
    }
}

/// Starts `serve` on `data` and waits for it to exit; the exit code and the log.
private func serveExpectingRefusal(_ data: URL, environment: [String: String]) throws -> (code: Int32?, log: String) {
    let any = "tcp://127.0.0.1:*"
    let process = try StrataProcess(
        ["serve", "--data", data.path, "--commands", any, "--events", any, "--history", any], environment: environment)
    defer { process.stop() }
    return (process.waitForExit(timeout: 30), process.log)
}

private func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return try #require(attributes[.posixPermissions] as? NSNumber).intValue & 0o777
}

/// Changes the first event that carries an amount (`…Cents`) and recomputes every
/// `prev_hash` and `hash` from there to the end, as someone without the signing key
/// would; returns that position.
private func rewriteFromFirstAmount(_ path: String) throws -> Int64 {
    let c = try SQLiteConnection(path: path, mode: .readWrite)
    let first = try #require(
        try c.scalarInteger("SELECT min(position) FROM events WHERE data LIKE '%Cents\":%' AND position > 1"))
    try c.statement("UPDATE events SET data = replace(data, 'Cents\":', 'Cents\":9') WHERE position = ?")
        .run([.integer(first)])
    let store = try SQLiteEventStore(readingAt: path)
    let previousHex = try #require(try store.hash(at: first - 1))
    var previous = try #require(Hex.decode(previousHex))
    for event in try store.events(after: first - 1, limit: Int.max) {
        let rewritten = RecordedEvent(
            position: event.position, stream: event.stream, version: event.version, type: event.type,
            schemaVersion: event.schemaVersion, recordedAt: event.recordedAt, data: event.data,
            metadata: event.metadata, prevHash: Hex.encode(previous), hash: "")
        let hash = HashChain.hash(previous: previous, canonicalEvent: rewritten.canonicalBody)
        try c.statement("UPDATE events SET prev_hash = ?, hash = ? WHERE position = ?")
            .run([.text(Hex.encode(previous)), .text(Hex.encode(hash)), .integer(event.position)])
        previous = hash
    }
    return first
}
