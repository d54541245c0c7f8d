import Foundation
import ProjectorRuntime
import StrataCore
import StrataTesting
import SubjectKeys
import Testing

/// A projector that opens personal data through the key store, where there is none it can
/// read: that is the machine's setup (exit 2), not an event that does not open, so nothing is
/// recorded in the file and nothing suggests skipping the event, which would lose it for good.
@Suite(.serialized) struct ProjectorKeyStoreTests {
    /// `strata project NAME` in `remote` (a data directory of its own), against `system`'s service.
    static func remoteProjector(_ name: String, _ system: System, in remote: URL) throws -> StrataProcess {
        try StrataProcess(
            ["project", name, "--data", remote.path, "--events", system.service.events]
                + ["--history", system.service.history, "--keys", system.data.appendingPathComponent("keys.json").path]
                + ["--key", ServiceProcess.Keys.service])
    }

    @Test(arguments: ["missing", "not a key store"])
    func aKeyStoreThatCannotBeReadEndsTheProjectorWithoutAStop(keyStore: String) throws {
        let system = try System("key-store-\(keyStore.split(separator: " ").joined(separator: "-"))")
        try system.send(system.workload.setup())
        let remote = try ChildProcess.temporaryDirectory("strata-key-store-remote")
        defer { try? FileManager.default.removeItem(at: remote) }
        if keyStore == "not a key store" {
            try Data(repeating: 0x5A, count: 8192).write(to: remote.appendingPathComponent(SubjectKeyStore.fileName))
        }

        let projector = try Self.remoteProjector("readmodels", system, in: remote)
        #expect(projector.waitForExit(timeout: 60) == 2, "\(projector.log)")
        #expect(projector.log.contains("--open-through-history"), "\(projector.log)")
        #expect(!projector.log.contains("--skip"), "\(projector.log)")
        let snapshot = try ProjectionSnapshot(path: remote.appendingPathComponent("readmodels.db").path)
        #expect(snapshot?.stop == nil, "\(String(describing: snapshot?.stop))")
    }

    /// The audit log holds no personal data, so its projector needs no key store, nor history
    /// to open anything, wherever it runs.
    @Test func theAuditProjectorNeedsNoKeyStore() throws {
        let system = try System("audit-no-key-store")
        try system.send(system.workload.setup())
        let head = try system.service.store().head()
        let remote = try ChildProcess.temporaryDirectory("strata-audit-remote")
        defer { try? FileManager.default.removeItem(at: remote) }

        let projector = try Self.remoteProjector("audit", system, in: remote)
        let path = remote.appendingPathComponent("audit.db").path
        let deadline = Date().addingTimeInterval(60)
        // Read with try?: the file may be there before its schema is.
        var snapshot = try? ProjectionSnapshot(path: path)
        while projector.isRunning, snapshot?.checkpoint != head, Date() < deadline {
            usleep(50_000)
            snapshot = try? ProjectionSnapshot(path: path)
        }
        #expect(snapshot?.checkpoint == head, "\(projector.log)")
        #expect(snapshot?.stop == nil, "\(String(describing: snapshot?.stop))")
        #expect(projector.stop() == 0, "\(projector.log)")
    }
}
