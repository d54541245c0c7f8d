import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing

// The end-to-end suites that exchange single requests with a real service and check what
// the journal and the store say afterwards.

/// A running service with a raw DEALER on its commands endpoint, and the store beneath it.
final class ServiceRig {
    let data: URL
    let service: ServiceProcess
    let context: ZMQContext
    let dealer: ZMQSocket
    /// A raw DEALER on the history endpoint.
    let history: ZMQSocket
    /// Good commands sent by `expectStillServing`, each appending one event.
    private(set) var probes = 0

    init(name: String = "strata-errors") throws {
        let data = try ChildProcess.temporaryDirectory(name)
        do {
            try ServiceProcess.prepare(data)
            service = try ServiceProcess(dataDirectory: data)
            context = try ZMQContext()
            dealer = try ZMQSocket(context, .dealer)
            try dealer.setHighWaterMarks(send: 0, receive: 0)
            try dealer.connect(service.commands)
            history = try ZMQSocket(context, .dealer)
            try history.setHighWaterMarks(send: 0, receive: 0)
            try history.connect(service.history)
        } catch {
            try? FileManager.default.removeItem(at: data)
            throw error
        }
        self.data = data
    }

    func close() {
        dealer.close()
        history.close()
        #expect(service.stop() == 0, "the service stops cleanly: \(service.log)")
        try? FileManager.default.removeItem(at: data)
    }

    func signedFrames(
        _ body: [UInt8], key: String = ServiceProcess.Keys.service, secretOf: String? = nil, ts: Int64? = nil
    ) throws -> [[UInt8]] {
        try service.signedFrames(body, key: key, secretOf: secretOf, timestamp: ts)
    }

    /// Sends `frames` as they are on `socket` (a DEALER) and reads the reply `["", json]`.
    func exchange(_ frames: [[UInt8]], on socket: ZMQSocket? = nil, sourceLocation: SourceLocation = #_sourceLocation)
        throws -> JSONValue
    {
        let socket = socket ?? dealer
        try socket.send(frames)
        return try JSONParser.parse(
            receiveReply(on: socket, from: service, timeoutMilliseconds: 15_000, sourceLocation: sourceLocation))
    }

    /// An agent registering itself: a body the service accepts once.
    func registration(id: String, agent: String, username: String) -> [UInt8] {
        CommandBody(
            id: id, type: "RegisterUser", actor: agent,
            payload: [
                "userId": .string(agent), "username": .string(username), "email": .string("\(agent)@example.com"),
                "role": "AGENT",
            ]
        ).json
    }

    /// Sends a new good command and expects it accepted: the service survived what came before.
    func expectStillServing(_ note: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        probes += 1
        let id = "alive-\(probes)"
        let reply = try exchange(
            signedFrames(registration(id: id, agent: "alive-agent-\(probes)", username: "alive\(probes)")),
            sourceLocation: sourceLocation)
        #expect(
            reply["id"]?.stringValue == id && reply["ok"] == .bool(true),
            "the service still serves\(note.map { " (\($0))" } ?? ""): \(CanonicalJSON.string(reply))", sourceLocation: sourceLocation)
        #expect(service.isRunning, sourceLocation: sourceLocation)
    }

    func store() throws -> SQLiteEventStore { try service.store() }

    func head() throws -> Int64 { try store().head() }

    func journaled(_ id: String) throws -> JournalEntry? { try store().journalEntry(commandId: id) }
}

/// A refusal as the contract shapes it: `ok` false, the code and reason, a message, the id
/// when the body's id was read, and not a duplicate (a first decision).
func expectRefusal(
    _ reply: JSONValue, _ code: String, _ reason: String, id: String?, _ note: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let text = "\(note.map { "\($0): " } ?? "")\(CanonicalJSON.string(reply))"
    #expect(reply["ok"] == .bool(false), "\(text)", sourceLocation: sourceLocation)
    #expect(reply["error"]?["code"]?.stringValue == code, "code: \(text)", sourceLocation: sourceLocation)
    #expect(reply["error"]?["reason"]?.stringValue == reason, "reason: \(text)", sourceLocation: sourceLocation)
    #expect(reply["error"]?["message"]?.stringValue?.isEmpty == false, "message: \(text)", sourceLocation: sourceLocation)
    #expect(reply["id"]?.stringValue == id, "id: \(text)", sourceLocation: sourceLocation)
    #expect(reply["duplicate"] != .bool(true), "a first decision is no duplicate: \(text)", sourceLocation: sourceLocation)
    #expect(reply["events"] == nil, "a refusal has no events: \(text)", sourceLocation: sourceLocation)
}

/// The journal holds `id` with exactly the refusal that was sent.
func expectJournaled(
    _ rig: ServiceRig, _ id: String, _ reply: JSONValue, sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let entry = try rig.journaled(id)
    #expect(entry != nil, "\(id) was decided and must be journaled", sourceLocation: sourceLocation)
    guard let entry, let error = reply["error"].flatMap(StrataError.init(json:)) else { return }
    #expect(entry.outcome == .refused(error), "the journal keeps the reply sent", sourceLocation: sourceLocation)
}

/// A reply's `details` as `field:reason`, in order.
func refusalDetails(_ reply: JSONValue) -> [String] {
    (reply["error"]?["details"]?.arrayValue ?? []).map {
        "\($0["field"]?.stringValue ?? "?"):\($0["reason"]?.stringValue ?? "?")"
    }
}
