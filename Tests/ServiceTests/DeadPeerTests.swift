import Bus
import Foundation
import StrataCore
import StrataTesting
import Synchronization
import Testing
import Workloads

/// Peers the service can no longer reach, though nothing told it so: no reset, no end, as
/// behind a link that drops every packet. The service lets them go within `PeerLiveness`'s
/// bound, and keeps a healthy subscriber however slow its link.
@Suite struct DeadPeerTests {
    /// Tests/IndependentChecks/dead_peers.py puts three pyzmq subscribers behind user-space TCP
    /// proxies while commands are published: one proxy turns into a blackhole (it reads and
    /// forwards nothing), one stalls (it reads nothing, so the service's bytes pile up in the
    /// kernels until its window shuts), one forwards at 32 KB/s, far below what is published, to a
    /// subscriber that pings. It reads from /proc/net/tcp whether the service still holds each
    /// connection.
    /// Without heartbeats nor a retransmission timeout, the service held both dead subscribers'
    /// connections, and queued events for them, for the whole watch (and TCP would keep a
    /// blackholed one some 15 minutes, a stalled one for ever).
    @Test func subscribersBehindASilentLinkAreDroppedAndASlowOneIsKept() throws {
        let data = try ChildProcess.temporaryDirectory("strata-dead-peers")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        defer { _ = service.stop() }
        let load = SteadyLoad(
            commands: service.commands, key: ServiceProcess.Keys.service,
            secret: try service.secret(of: ServiceProcess.Keys.service), perSecond: 300)
        defer { load.stop() }

        let bound = Int64(PeerLiveness.detectionBoundMilliseconds)
        let script = DocumentedClientTests.repository.appendingPathComponent("Tests/IndependentChecks/dead_peers.py")
        let run = try ChildProcess.run(
            DocumentedClientTests.python(), [script.path],
            environment: ["STRATA_EVENTS": service.events, "WATCH_SECONDS": String(bound / 1000 + 10)])
        try #require(run.exitCode == 0, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")
        print("dead peers: \(run.stdout)")
        let result = try JSONParser.parse(Array(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
        #expect(load.stop() > 0, "commands were answered throughout")

        // A few seconds over the bound: the proxy looks twice a second, and TCP's own timer for a
        // shut window ticks on its own.
        for dead in ["blackhole", "stalled"] {
            let after = result[dead]?["droppedAfterMilliseconds"]?.integerValue
            #expect(after != nil && after! <= bound + 5000, "\(dead): \(run.stdout)\n\(service.log)")
        }
        let slow = result["slow"]
        #expect(slow?["droppedAfterMilliseconds"] == .null, "the slow subscriber was kept: \(run.stdout)")
        #expect(slow?["connections"]?.integerValue == 1, "it never had to connect again: \(run.stdout)")
        #expect((slow?["receivedAfter"]?.integerValue ?? 0) > 500, "it kept receiving: \(run.stdout)")
        #expect(service.isRunning)
    }
}

/// Commands sent at a steady pace from a thread of its own, each answered, until stopped:
/// events published all along.
private final class SteadyLoad: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let answered = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)

    init(commands: String, key: String, secret: [UInt8], perSecond: Int) {
        Thread.detachNewThread { [self] in
            defer { finished.signal() }
            do {
                let context = try ZMQContext()
                let client = try SignedClient(context, endpoint: commands, keyId: key, secret: secret)
                defer { client.close() }
                let workload = LendingWorkload(
                    admin: ServiceProcess.admin, prefix: "dp", agents: 2, accountsPerAgent: 20,
                    today: Timestamp.now().date)
                for body in workload.setup() { try client.send(body.json) }
                let start = ContinuousClock.now
                var loans = 0
                while !stopping.load(ordering: .relaxed) {
                    // Three commands a loan.
                    let elapsed = (ContinuousClock.now - start) / .milliseconds(1)
                    let due = Int(elapsed * Double(perSecond) / 3000) + 1
                    while loans < due {
                        for body in workload.loan(loans) { try client.send(body.json) }
                        loans += 1
                    }
                    while try client.receive(timeoutMilliseconds: 20) != nil {
                        answered.wrappingAdd(1, ordering: .relaxed)
                    }
                }
            } catch {
                print("the steady load ended: \(error)")
            }
        }
    }

    /// Stops the load (once) and says how many replies came.
    @discardableResult
    func stop() -> Int {
        if !stopping.exchange(true, ordering: .relaxed) { finished.wait() }
        return answered.load(ordering: .relaxed)
    }
}
