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
        func register(_ n: Int) -> CommandBody {
            CommandBody(
                id: "displaced-\(n)", type: "RegisterUser", actor: "displaced-\(n)",
                payload: [
                    "userId": .string("displaced-\(n)"), "username": .string("displaced\(n)"),
                    "email": .string("displaced\(n)@example.com"), "role": "AGENT",
                ])
        }
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
}
