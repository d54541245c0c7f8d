import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// The lending loop through the real service: setup, then request, approve and pay for
/// each loan, pipelined over one DEALER, every command accepted and durable.
@Suite struct LendingFlowTests {
    @Test func aLendingDayIsAcceptedAndStored() throws {
        let data = try ChildProcess.temporaryDirectory("strata-serve")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let context = try ZMQContext()
        let client = try service.commandClient(context)
        defer { client.close() }

        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "t", agents: 2, accountsPerAgent: 5, today: Timestamp.now().date)
        let bodies = workload.setup() + (0..<20).flatMap(workload.loan) + (0..<5).flatMap(workload.invoice)
        for body in bodies { try client.send(body.json) }
        var accepted = 0
        for body in bodies {
            let reply = try #require(try client.receive(timeoutMilliseconds: 30_000), "no reply for \(body.id)")
            let json = try JSONParser.parse(reply)
            #expect(json["id"]?.stringValue == body.id, "replies come back in the order sent")
            #expect(json["ok"] == .bool(true), "\(body.id): \(String(decoding: reply, as: UTF8.self))")
            if json["ok"] == .bool(true) { accepted += 1 }
        }
        #expect(accepted == bodies.count)
        #expect(service.stop() == 0)

        let store = try SQLiteEventStore(readingAt: data.appendingPathComponent("events.db").path)
        for body in bodies {
            #expect(try store.journalEntry(commandId: body.id) != nil, "\(body.id) is journaled")
        }
        #expect(try store.verify().isIntact)
    }
}
