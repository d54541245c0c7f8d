import Bus
import EventStore
import Events
import Foundation
import StrataCore
import Synchronization
import Testing

@testable import ProjectorRuntime

private func recorded(_ position: Int64, stream: String, data: String) -> RecordedEvent {
    RecordedEvent(
        position: position, stream: stream, version: 1, type: "InvoiceCreated", schemaVersion: 1,
        recordedAt: "2026-11-20T10:00:00.000Z", data: Array(data.utf8), metadata: Array(#"{"actor":"a","commandId":"c"}"#.utf8),
        prevHash: String(repeating: "0", count: 64), hash: String(repeating: "0", count: 64))
}

@Suite struct HistoryOpenedValuesTests {
    @Test func whatHistoryOpenedOpensOnceAndNothingElse() throws {
        let values = HistoryOpenedValues()
        let event = recorded(
            7, stream: "invoice-I1",
            data: #"{"customer":{"name":"pd1.party:P1:k.a","taxId":"pd1.party:P1:k.b"},"invoiceId":"I1"}"#)
        try values.learn(
            HistoryPage(
                events: [event], head: 7, opened: [7: ["/customer/name": "Acme Traders", "/customer/taxId": "[erased]"]]))
        #expect(try values.open("pd1.party:P1:k.a", stream: "invoice-I1") == "Acme Traders")
        #expect(try values.open("pd1.party:P1:k.b", stream: "invoice-I1") == .erased)
        // Each value once: its event is applied once.
        #expect(throws: PersonalDataError.self) { try values.open("pd1.party:P1:k.a", stream: "invoice-I1") }
        #expect(throws: PersonalDataError.self) { try values.open("pd1.party:P9:k.z", stream: "invoice-I9") }
    }

    @Test func openedFieldsMustNameSealedValues() {
        let values = HistoryOpenedValues()
        let event = recorded(3, stream: "invoice-I1", data: #"{"customer":{"name":"Acme"},"invoiceId":"I1"}"#)
        #expect(throws: HistoryError.self) {
            try values.learn(HistoryPage(events: [event], head: 3, opened: [3: ["/customer/name": "Acme"]]))
        }
        #expect(throws: HistoryError.self) {
            try values.learn(HistoryPage(events: [event], head: 3, opened: [3: ["/customer/nothing": "x"]]))
        }
    }

    @Test func pointersFollowRFC6901() throws {
        let data = try JSONParser.parse(Array(#"{"a/b":{"c~d":["x","y"]},"e":"f"}"#.utf8))
        #expect(HistoryOpenedValues.string(at: "/a~1b/c~0d/1", in: data) == "y")
        #expect(HistoryOpenedValues.string(at: "/e", in: data) == "f")
        #expect(HistoryOpenedValues.string(at: "/a~1b/c~0d/2", in: data) == nil)
        #expect(HistoryOpenedValues.string(at: "/missing", in: data) == nil)
    }

    @Test func onlyEventsWithSealedValuesNeedHistory() {
        #expect(HistoryOpenedValues.needsHistory(recorded(1, stream: "invoice-I1", data: #"{"name":"pd1.party:P1:k.a"}"#)))
        #expect(!HistoryOpenedValues.needsHistory(recorded(1, stream: "loan-L1", data: #"{"notes":"pd1 is not sealed"}"#)))
    }

    @Test func aPageWithOpenedFieldsIsRead() throws {
        let event = recorded(7, stream: "invoice-I1", data: #"{"customer":{"name":"pd1.party:P1:k.a"},"invoiceId":"I1"}"#)
        let reply = Array(#"{"events":["#.utf8) + event.json
            + Array(#"],"head":9,"ok":true,"opened":{"7":{"/customer/name":"Acme Traders"}}}"#.utf8)
        let page = try BusHistory.parse(reply)
        #expect(page.events == [event] && page.head == 9)
        #expect(page.opened == [7: ["/customer/name": "Acme Traders"]])
        #expect(throws: HistoryError.self) {
            try BusHistory.parse(Array(#"{"events":[],"head":9,"ok":true,"opened":{"7":{"/x":1}}}"#.utf8))
        }
    }

    /// Only a stopping service and a store or key store that could not be read are worth asking
    /// again; personal data the service cannot open is refused again however often it is asked for.
    /// A refused key is asked again for a while (`BusHistory.keyGrace`): the service rereads its
    /// key file once a second.
    @Test(arguments: [
        ("UNAVAILABLE", "SHUTTING_DOWN", HistoryError.Kind.unavailable), ("INTERNAL", "STORE_FAILURE", .unavailable),
        ("INTERNAL", "KEY_STORE_FAILURE", .unavailable),
        ("INTERNAL", "NO_KEY_STORE", .refused), ("INTERNAL", "PERSONAL_DATA_UNREADABLE", .refused),
        ("FORBIDDEN", "KEY_SCOPE", .keyRefused), ("UNAUTHENTICATED", "BAD_SIGNATURE", .keyRefused),
        ("INVALID", "LIMIT", .refused),
    ])
    func aRefusalIsRetriedOnlyWhenItMayClear(code: String, reason: String, kind: HistoryError.Kind) {
        let reply = #"{"error":{"code":"\#(code)","message":"m","reason":"\#(reason)"},"ok":false}"#
        let error = #expect(throws: HistoryError.self) { try BusHistory.parse(Array(reply.utf8)) }
        #expect(error?.kind == kind)
    }
}

/// A request to an endpoint that never answers: given up on for a stop, it says so, and only
/// a wait that ran its course is called silence (the log line an operator reads on a stop).
@Suite struct HistoryWaitTests {
    @Test(arguments: [true, false])
    func aStopIsNotCalledSilence(_ stopping: Bool) throws {
        let context = try ZMQContext()
        // A ROUTER that receives and never answers.
        let silent = try ZMQSocket(context, .router)
        try silent.bind("tcp://127.0.0.1:*")
        let endpoint = try silent.lastEndpoint()
        defer { silent.close() }
        let key = KeyFile.Key(id: "reader", secret: [UInt8](repeating: 7, count: 32), scopes: [.history])
        let history = try BusHistory(
            context: context, endpoint: endpoint, key: key, timeoutMilliseconds: 400, shouldGiveUp: { stopping })
        let error = #expect(throws: HistoryError.self) { try history.page(after: 0, limit: 1) }
        #expect(error?.kind == .unavailable)
        let message = error?.message ?? ""
        if stopping {
            #expect(message == "stopped while waiting 0 ms for an answer from \(endpoint)", "\(message)")
        } else {
            #expect(message == "no answer from \(endpoint) within 400 ms", "\(message)")
        }
    }

    /// A link that cannot carry a full page within the timeout: a remote projector behind 300 ms of
    /// latency, or 20% loss, asked for 2,000 events over a connection made anew for each try, never
    /// got one, and stayed where it was for as long as the link was slow. Pages now halve until one
    /// comes in time, and grow again with each answer.
    @Test func pagesShrinkUntilOneComesInTimeAndGrowAgain() throws {
        let context = try ZMQContext()
        let shared = PageServerState()
        // Answers a request for at most 100 events; a larger page would not arrive in time.
        let server = Thread {
            do throws(ZMQError) {
                let router = try ZMQSocket(context, .router)
                defer { router.close() }
                try router.bind("tcp://127.0.0.1:*")
                let bound = try router.lastEndpoint()
                shared.endpoint.withLock { $0 = bound }
                while !shared.done.load(ordering: .relaxed) {
                    guard try !zmqPollReadable([router], timeoutMilliseconds: 50).isEmpty,
                        let frames = try router.receive(wait: false), frames.count == 4,
                        let limit = try? JSONParser.parse(frames[3])["limit"]?.integerValue
                    else { continue }
                    shared.asked.withLock { $0.append(limit) }
                    if limit <= 100 {
                        _ = try router.send([frames[0], [], Array(#"{"events":[],"head":0,"ok":true}"#.utf8)])
                    }
                }
            } catch {}
        }
        server.start()
        defer { shared.done.store(true, ordering: .relaxed) }
        var bound: String?
        for _ in 0..<100 where bound == nil {
            Thread.sleep(forTimeInterval: 0.02)
            bound = shared.endpoint.withLock { $0 }
        }
        let key = KeyFile.Key(id: "reader", secret: [UInt8](repeating: 7, count: 32), scopes: [.history])
        let history = try BusHistory(
            context: context, endpoint: try #require(bound), key: key, timeoutMilliseconds: 300)
        var answered = false
        for _ in 0..<12 where !answered {
            answered = (try? history.page(after: 0, limit: 2000)) != nil
        }
        #expect(answered, "no page came: asked for \(shared.asked.withLock { $0 })")
        _ = try? history.page(after: 0, limit: 2000)
        #expect(shared.asked.withLock { $0 } == [2000, 1000, 500, 250, 125, 62, 124])
    }
}

/// What the test's page server and the test share across their threads.
private final class PageServerState: Sendable {
    let endpoint = Mutex<String?>(nil)
    let asked = Mutex<[Int64]>([])
    let done = Atomic<Bool>(false)
}
