import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing

/// The store moved away from under a running service (a backup put in its place by hand, or a
/// slip of `mv`): nothing more is acknowledged into a file no reader or later start would see;
/// each command is refused INTERNAL and not journaled, with the log saying why, and once the
/// file is back at its path the service records again.
@Suite struct DisplacedStoreTests {
    @Test func aStoreMovedAwayFromARunningServiceIsAppendedToNoMore() throws {
        let system = try System("displaced")
        try system.send(system.workload.setup())
        let head = try system.service.store().head()
        let moved = system.storePath + ".moved"
        #expect(rename(system.storePath, moved) == 0)
        let secret = try system.service.secret(of: ServiceProcess.Keys.service)
        let register = { (n: Int) in Self.register("displaced-\(n)") }
        let refused = try System.exchange(
            [register(1), register(2)], endpoint: system.service.commands, secret: secret, context: system.context)
        for (n, reply) in refused.enumerated() {
            expectRefusal(reply, "INTERNAL", "STORE_FAILURE", id: "displaced-\(n + 1)")
            #expect(reply["error"]?["message"]?.stringValue?.contains("was removed or moved away") == true, "\(reply)")
        }

        // Back at its path, the same file: the refused commands are decided afresh.
        #expect(rename(moved, system.storePath) == 0)
        let accepted = try System.exchange(
            [register(1)], endpoint: system.service.commands, secret: secret, context: system.context)
        #expect(accepted.first?["events"]?.arrayValue?.first?["position"]?.integerValue == head + 1, "\(accepted)")
        #expect(try system.service.store().journalEntry(commandId: "displaced-2") == nil)
        #expect(system.service.stop() == 0)
        #expect(system.service.log.contains("was removed or moved away while this process had it open"))
    }

    /// The store's writer lock file removed under a running service (taken for a stale one):
    /// the service takes the lock again while idle, so a second writer is still refused. A lock
    /// file put in its place and held by another process stops the service recording until that
    /// process lets go; then it records again, deciding the refused command afresh.
    @Test func aWriterLockFileRemovedUnderARunningServiceIsTakenAgain() throws {
        let system = try System("lockfile")
        try system.send(system.workload.setup())
        let head = try system.service.store().head()
        let lockPath = system.storePath + "-lock"
        let pid = system.service.processIdentifier
        #expect(unlink(lockPath) == 0)
        // The pid is written once the lock is held: a writer started before that could win it.
        let deadline = Date() + 10
        while (try? String(contentsOfFile: lockPath, encoding: .utf8)) != "\(pid)\n", Date() < deadline {
            usleep(20_000)
        }
        var second: StoreError?
        do { _ = try SQLiteEventStore(path: system.storePath) } catch { second = error }
        #expect(second?.kind == .locked, "\(String(describing: second))")
        #expect(second?.message.contains("pid \(pid)") == true, "\(String(describing: second))")

        let other = try WriterLock.acquire(for: system.storePath + ".other")
        #expect(rename(system.storePath + ".other-lock", lockPath) == 0)
        let secret = try system.service.secret(of: ServiceProcess.Keys.service)
        let refused = try System.exchange(
            [Self.register("lockfile-1")], endpoint: system.service.commands, secret: secret, context: system.context)
        expectRefusal(refused[0], "INTERNAL", "STORE_FAILURE", id: "lockfile-1")
        let message = refused[0]["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("(pid \(getpid())) holds the lock there now"), "\(refused[0])")

        other.release()
        let accepted = try System.exchange(
            [Self.register("lockfile-1")], endpoint: system.service.commands, secret: secret, context: system.context)
        #expect(accepted.first?["events"]?.arrayValue?.first?["position"]?.integerValue == head + 1, "\(accepted)")
        #expect(system.service.stop() == 0)
        #expect(system.service.log.contains("the lock is taken again"))
        #expect(system.service.log.contains("nothing more is recorded here until it lets go"))
    }

    private static func register(_ id: String) -> CommandBody {
        let name = id.replacingOccurrences(of: "-", with: "")
        return CommandBody(
            id: id, type: "RegisterUser", actor: id,
            payload: [
                "userId": .string(id), "username": .string(name), "email": .string("\(name)@example.com"),
                "role": "AGENT",
            ])
    }
}
