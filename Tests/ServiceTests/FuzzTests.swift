import Bus
import CommandService
import EventStore
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// Thousands of random, truncated and mutated requests against the real service
/// (CONTRACT.md "Commands": "Any malformed input … gets a clear refusal; the service keeps
/// running and nothing is appended"), reproducible from the printed seed
/// (`STRATA_FUZZ_SEED=<n>` replays one run).
///
/// Why no fuzz request may be decided: a request is decided only when its signature
/// verifies, and the signature covers `ts`, the key id and every body byte. A single-byte
/// change of the body, or of the `key`/`ts`/`sig` values, breaks it (up to an HMAC
/// forgery); a change anywhere else in the canonical header breaks its JSON or its shape.
/// The one single-byte change that keeps a header's meaning is flipping the case of a hex
/// letter of `sig` (the server reads hex in either case), so the generator never makes that
/// one: every request here is unsigned or malformed, and must be refused as MALFORMED,
/// TOO_LARGE or UNAUTHENTICATED, without a journal entry.
@Suite struct FuzzTests {
    @Test func randomAndBrokenFramesAreAllRefusedAndNothingIsAppended() throws {
        let seed = fuzzSeed()
        print("FuzzTests: seed \(seed) (replay with STRATA_FUZZ_SEED=\(seed))")
        var random = SplitMix64(seed: seed)

        let data = try ChildProcess.temporaryDirectory("strata-fuzz")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        let storePath = data.appendingPathComponent("events.db").path
        let headBefore = try SQLiteEventStore(readingAt: storePath).head()

        let signer = FuzzSigner(
            keyId: ServiceProcess.Keys.service, secret: try service.secret(of: ServiceProcess.Keys.service))
        let workload = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "fz", agents: 50, accountsPerAgent: 2, today: Timestamp.now().date)
        let validBodies = workload.setup() + (0..<50).flatMap(workload.loan)

        let count = 5000
        var cases: [FuzzCase] = []
        cases.reserveCapacity(count)
        for index in 0..<count {
            cases.append(makeFuzzCase(index, random: &random, signer: signer, validBodies: validBodies))
        }

        let context = try ZMQContext()
        let dealer = try ZMQSocket(context, .dealer)
        defer { dealer.close() }
        try dealer.setHighWaterMarks(send: 0, receive: 0)
        try dealer.connect(service.commands)
        for fuzz in cases { try dealer.send(fuzz.frames) }

        var replyIds: Set<String> = []
        var codes: [String: Int] = [:]
        for (index, fuzz) in cases.enumerated() {
            guard let frames = try receiveFuzzReply(dealer, timeoutMilliseconds: 20_000) else {
                Issue.record(
                    "seed \(seed): no reply for request \(index) (\(fuzz.label)); \(index) of \(count) answered")
                break
            }
            let place = "seed \(seed), request \(index) (\(fuzz.label))"
            #expect(
                frames.count == 2 && frames.first == [],
                "\(place): a DEALER gets [\"\", reply], got \(frames.count) frames")
            let reply = try #require(try? JSONParser.parse(frames.last ?? []), "\(place): the reply is not JSON")
            #expect(reply["ok"] == .bool(false), "\(place): \(fuzzText(frames.last ?? []))")
            let code = reply["error"]?["code"]?.stringValue ?? "<none>"
            codes[code, default: 0] += 1
            #expect(fuzz.expected.contains(code), "\(place): got \(code), expected one of \(fuzz.expected.sorted())")
            #expect(fuzzContractCodes.contains(code), "\(place): \(code) is not a code of the contract")
            if reply["duplicate"] == .bool(true) { Issue.record("\(place): a fuzz request answered as a duplicate") }
            let replyId = reply["id"]?.stringValue
            if let replyId { replyIds.insert(replyId) }
            switch fuzz.id {
            case .unknown: break
            case .ifPresent(let id):
                if let replyId { #expect(replyId == id, "\(place): the reply names another request (order)") }
            case .required(let id):
                #expect(replyId == id, "\(place): the reply must name \(id) (order), got \(replyId ?? "none")")
            }
        }
        print("FuzzTests: \(count) requests, codes \(codes.sorted { $0.key < $1.key })")
        // Exactly one reply each: nothing more comes.
        #expect(
            try zmqPollReadable([dealer], timeoutMilliseconds: 300).isEmpty, "seed \(seed): more replies than requests")

        // A few through REQ, whose framing is [header][body] and whose reply is [reply].
        let request = try ZMQSocket(context, .request)
        defer { request.close() }
        try request.connect(service.commands)
        for index in 0..<40 {
            var frames = (0..<Int.random(in: 1...3, using: &random)).map { _ in fuzzRandomBytes(&random, upTo: 96) }
            if index % 4 == 0 {
                // A REQ client's own framing with a signed header and a broken body.
                let body = Array(validBodies[index].json.dropLast())
                frames = [signer.header(for: body), body]
            }
            try request.send(frames)
            let reply = try #require(
                try receiveFuzzReply(request, timeoutMilliseconds: 10_000), "REQ request \(index) unanswered")
            #expect(reply.count == 1, "REQ \(index): a REQ client gets [reply], got \(reply.count) frames")
            let json = try JSONParser.parse(reply.last ?? [])
            #expect(
                json["ok"] == .bool(false) && json["error"]?["code"] == "MALFORMED",
                "REQ \(index): \(fuzzText(reply.last ?? []))")
        }

        // A frame past libzmq's ceiling may cost its sender the connection, never the service.
        let oversized = try ZMQSocket(context, .dealer)
        try oversized.connect(service.commands)
        let huge = [UInt8](repeating: UInt8(ascii: "a"), count: 2 * 1024 * 1024)
        try oversized.send([[], signer.header(for: huge), huge])
        _ = try zmqPollReadable([oversized], timeoutMilliseconds: 300)
        oversized.close()

        #expect(service.isRunning, "seed \(seed): the service died; log:\n\(service.log)")
        let peak = try #require(service.peakResidentKiB, "no /proc status")
        print("FuzzTests: service peak RSS \(peak / 1024) MiB")
        #expect(peak < 200 * 1024, "the service's peak resident memory \(peak) KiB")
        let store = try SQLiteEventStore(readingAt: storePath)
        #expect(try store.head() == headBefore, "seed \(seed): fuzz requests appended events")
        var journaled: [String] = []
        for id in replyIds.union(cases.compactMap(\.baseId)).sorted() where try store.journalEntry(commandId: id) != nil
        {
            journaled.append(id)
        }
        #expect(
            journaled.count == 0, "seed \(seed): unsigned or malformed requests were journaled: \(journaled.prefix(10))"
        )

        // Still serving: a valid command is accepted and is the only thing appended.
        let client = try service.commandClient(context)
        defer { client.close() }
        let valid = LendingWorkload(
            admin: ServiceProcess.admin, prefix: "fzok", agents: 1, accountsPerAgent: 1, today: Timestamp.now().date
        ).setup()[0]
        let accepted = try JSONParser.parse(
            try #require(try client.request(valid.json), "the valid command went unanswered"))
        #expect(accepted["ok"] == .bool(true) && accepted["duplicate"] == .bool(false), "\(accepted)")
        let events = accepted["events"]?.arrayValue ?? []
        #expect(events.first?["position"]?.integerValue == headBefore + 1)
        #expect(try store.head() == headBefore + Int64(events.count))
        #expect(try store.journalEntry(commandId: valid.id) != nil)
        #expect(try store.verify().isIntact)
        #expect(service.stop() == 0)
    }

    @Test func historyEndpointRefusesBrokenRequestsAndKeepsServing() throws {
        let seed = fuzzSeed() &+ 1
        print("FuzzTests (history): seed \(seed)")
        var random = SplitMix64(seed: seed)
        let data = try ChildProcess.temporaryDirectory("strata-fuzz-history")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        let signer = FuzzSigner(
            keyId: ServiceProcess.Keys.service, secret: try service.secret(of: ServiceProcess.Keys.service))
        let cmdOnly = FuzzSigner(
            keyId: ServiceProcess.Keys.commandsOnly, secret: try service.secret(of: ServiceProcess.Keys.commandsOnly))

        let valid = Array(#"{"after":0,"limit":100}"#.utf8)
        let crafted: [(body: String, code: String)] = [
            (#"{"after":-1}"#, "INVALID"), (#"{"after":0,"limit":0}"#, "INVALID"),
            (#"{"after":0,"limit":10001}"#, "INVALID"), (#"{"after":0,"categories":[]}"#, "INVALID"),
            (#"{"after":0,"categories":["Loan!"]}"#, "INVALID"), (#"{"after":"0"}"#, "MALFORMED"),
            (#"{"after":1.5}"#, "MALFORMED"), (#"{"after":99999999999999999999999}"#, "MALFORMED"),
            (#"{"after":0,"after":1}"#, "MALFORMED"), (#"{"after":0,"extra":1}"#, "MALFORMED"),
            (#"{"limit":5}"#, "MALFORMED"), (#"{"after":0,"categories":"loan"}"#, "MALFORMED"),
            (#"{"after":0,"categories":[1]}"#, "MALFORMED"), (#"[0]"#, "MALFORMED"), ("", "MALFORMED"),
            (String(repeating: "[", count: 5000), "MALFORMED"),
        ]
        var cases: [FuzzCase] = []
        for index in 0..<600 {
            switch index % 6 {
            case 0:
                cases.append(
                    FuzzCase(
                        label: "history random frames",
                        frames: (0..<Int.random(in: 1...6, using: &random)).map { _ in
                            fuzzRandomBytes(&random, upTo: 64)
                        },
                        expected: ["MALFORMED"]))
            case 1:
                var body = valid
                let at = Int.random(in: 0..<body.count, using: &random)
                body[at] ^= UInt8.random(in: 1...255, using: &random)
                cases.append(
                    FuzzCase(
                        label: "history body mutation", frames: [[], signer.header(for: valid), body],
                        expected: ["MALFORMED", "UNAUTHENTICATED"]))
            case 2:
                let body = Array(valid.prefix(Int.random(in: 0..<valid.count, using: &random)))
                cases.append(
                    FuzzCase(
                        label: "history truncated body", frames: [[], signer.header(for: body), body],
                        expected: ["MALFORMED"]))
            case 3:
                let (text, code) = crafted[(index / 6) % crafted.count]
                let body = Array(text.utf8)
                cases.append(
                    FuzzCase(
                        label: "history crafted \(text.prefix(40))", frames: [[], signer.header(for: body), body],
                        expected: [code]))
            case 4:
                var body = Array(#"{"after":0,"categories":["loan"]}"#.utf8)
                body.insert(contentsOf: [0xC3, 0x28], at: 26)
                cases.append(
                    FuzzCase(
                        label: "history invalid UTF-8", frames: [[], signer.header(for: body), body],
                        expected: ["MALFORMED"]))
            default:
                cases.append(
                    FuzzCase(
                        label: "history key without the scope", frames: [[], cmdOnly.header(for: valid), valid],
                        expected: ["FORBIDDEN"]))
            }
        }
        let big = [UInt8](repeating: UInt8(ascii: " "), count: 70_000)
        cases.append(
            FuzzCase(label: "history too large", frames: [[], signer.header(for: big), big], expected: ["TOO_LARGE"]))

        let context = try ZMQContext()
        let dealer = try ZMQSocket(context, .dealer)
        defer { dealer.close() }
        try dealer.setHighWaterMarks(send: 0, receive: 0)
        try dealer.connect(service.history)
        for fuzz in cases { try dealer.send(fuzz.frames) }
        for (index, fuzz) in cases.enumerated() {
            guard let frames = try receiveFuzzReply(dealer, timeoutMilliseconds: 20_000) else {
                Issue.record("seed \(seed): history request \(index) (\(fuzz.label)) unanswered")
                break
            }
            #expect(frames.count == 2 && frames.first == [], "history \(index): expected [\"\", reply]")
            let reply = try JSONParser.parse(frames.last ?? [])
            let code = reply["error"]?["code"]?.stringValue ?? "<none>"
            #expect(
                reply["ok"] == .bool(false) && fuzz.expected.contains(code),
                "seed \(seed), history \(index) (\(fuzz.label)): \(reply)")
        }
        #expect(try zmqPollReadable([dealer], timeoutMilliseconds: 300).isEmpty, "more history replies than requests")

        #expect(service.isRunning)
        let history = try service.historyClient(context)
        defer { history.close() }
        let page = try JSONParser.parse(
            try #require(try history.request(valid), "a valid history request went unanswered"))
        let head = try SQLiteEventStore(readingAt: data.appendingPathComponent("events.db").path).head()
        #expect(page["ok"] == .bool(true) && page["head"]?.integerValue == head, "\(page)")
        #expect(page["events"]?.arrayValue?.count == Int(head))
        #expect(service.stop() == 0)
    }
}

// MARK: - Generating requests

/// The error codes of CONTRACT.md, the fixed set.
private let fuzzContractCodes: Set<String> = [
    "MALFORMED", "UNAUTHENTICATED", "FORBIDDEN", "INVALID", "NOT_FOUND", "CONFLICT", "REJECTED", "TOO_LARGE",
    "UNAVAILABLE", "INTERNAL",
]

private func fuzzSeed() -> UInt64 {
    if let text = ProcessInfo.processInfo.environment["STRATA_FUZZ_SEED"], let seed = UInt64(text) { return seed }
    return UInt64.random(in: 0...UInt64.max)
}


/// Signs bodies as a client does, with a chosen timestamp.
private struct FuzzSigner {
    let keyId: String
    let secret: [UInt8]

    func header(for body: [UInt8], timestamp: Int64 = Timestamp.now().secondsSinceEpoch) -> [UInt8] {
        RequestSignature.header(secret: secret, keyId: keyId, timestamp: timestamp, body: body).json
    }
}

/// What a reply must say of its request's id (replies come back in the order sent, so a
/// reply naming another request's id means a lost, extra or reordered reply).
private enum FuzzReplyId {
    /// The body may have been mutated into another id.
    case unknown
    /// If the reply names an id, it is this one.
    case ifPresent(String)
    /// The body was read, so the reply names it.
    case required(String)
}

private struct FuzzCase {
    let label: String
    /// As the DEALER sends them (the ROUTER adds the routing id).
    let frames: [[UInt8]]
    let expected: Set<String>
    var id: FuzzReplyId = .unknown
    /// The id of the valid body this request was made from, if any.
    var baseId: String? = nil
}

private func fuzzRandomBytes(_ random: inout SplitMix64, upTo limit: Int) -> [UInt8] {
    (0..<Int.random(in: 0...limit, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
}

/// Crafted bodies that are syntactically or structurally broken (never a payload-content
/// problem, which would be INVALID and journaled). `%ID%` is replaced by a fresh id; `id`
/// says whether the server can read it before refusing.
private let fuzzCraftedBodies: [(text: String, idReadable: Bool)] = [
    (#"{"actor":"root","id":"%ID%","payload":{"n":1.},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{"n":1e},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{"n":.5},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{"n":-},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","expectedVersion":1.5,"id":"%ID%","payload":{},"type":"RegisterUser"}"#, true),
    (#"{"actor":"root","expectedVersion":-9223372036854775809,"id":"%ID%","payload":{},"type":"RegisterUser"}"#, true),
    (#"{"actor":"root","id":"%ID%","payload":{"n":NaN},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"%ID%","id":"%ID%","payload":{},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{"a":1,"a":1},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{"s":"\ud800"},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{"s":"\x"},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{},"type":"RegisterUser"} x"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{},"type":"RegisterUser",}"#, false),
    (#"{'actor':'root','id':'%ID%','payload':{},'type':'RegisterUser'}"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{},"type":"RegisterUser"} // comment"#, false),
    (#"{"actor":"root","payload":{},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":42,"payload":{},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"","payload":{},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"has space","payload":{},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"\#(String(repeating: "x", count: 65))","payload":{},"type":"RegisterUser"}"#, false),
    (#"{"actor":"root","id":"%ID%","payload":{},"type":7}"#, true),
    (#"{"actor":null,"id":"%ID%","payload":{},"type":"RegisterUser"}"#, true),
    (#"{"actor":"root","id":"%ID%","type":"RegisterUser"}"#, true),
    (#"{"actor":"root","id":"%ID%","payload":[],"type":"RegisterUser"}"#, true),
    (#"{"actor":"root","id":"%ID%","payload":"{}","type":"RegisterUser"}"#, true),
    (#"{"actor":"root","expectedVersion":-1,"id":"%ID%","payload":{},"type":"RegisterUser"}"#, true),
    (#"{"actor":"root","expectedVersion":"1","id":"%ID%","payload":{},"type":"RegisterUser"}"#, true),
    (#"{"actor":"root","correlationId":7,"id":"%ID%","payload":{},"type":"RegisterUser"}"#, true),
    (
        #"{"actor":"root","correlationId":"\#(String(repeating: "c", count: 200))","id":"%ID%","payload":{},"type":"RegisterUser"}"#,
        true
    ),
    (#"{"actor":"root","extra":true,"id":"%ID%","payload":{},"type":"RegisterUser"}"#, true),
    (#"["%ID%"]"#, false), (#""%ID%""#, false), ("42", false), ("null", false), ("", false), ("   ", false),
    ("{", false), ("}", false), ("{}", false),
]

private func makeFuzzCase(
    _ index: Int, random: inout SplitMix64, signer: FuzzSigner, validBodies: [CommandBody]
) -> FuzzCase {
    var base = validBodies[Int.random(in: 0..<validBodies.count, using: &random)]
    base.id = "fz-\(index)"
    let body = base.json
    let header = signer.header(for: body)
    let roll = Int.random(in: 0..<1000, using: &random)
    switch roll {
    case 0..<180:
        // Any number of random frames (a DEALER cannot send zero).
        let frames = (0..<Int.random(in: 1...6, using: &random)).map { _ in fuzzRandomBytes(&random, upTo: 200) }
        return FuzzCase(label: "random \(frames.count) frames", frames: frames, expected: ["MALFORMED"])
    case 180..<260:
        // The right frames, wrongly arranged.
        let shapes: [[[UInt8]]] = [
            [header, body], [[], header], [[], body], [[], header, body, []], [[], header, body, body],
            [[], [], header, body], [[0], header, body], [header, body, []], [[]], [[], [], []],
        ]
        let frames = shapes[Int.random(in: 0..<shapes.count, using: &random)]
        return FuzzCase(
            label: "\(frames.count) frames misarranged", frames: frames, expected: ["MALFORMED"],
            id: .ifPresent(base.id), baseId: base.id)
    case 260..<400:
        // One header byte changed (never the harmless hex case flip of `sig`, see above).
        var mutated = header
        let at = Int.random(in: 0..<mutated.count, using: &random)
        repeat {
            mutated[at] = UInt8.random(in: 0...255, using: &random)
        } while mutated[at] == header[at] || fuzzIsSigCaseFlip(header, at: at, to: mutated[at])
        return FuzzCase(
            label: "header byte \(at) changed", frames: [[], mutated, body],
            expected: ["MALFORMED", "UNAUTHENTICATED"],
            id: .ifPresent(base.id), baseId: base.id)
    case 400..<650:
        // One body byte changed: the signature no longer matches, or the body no longer reads.
        var mutated = body
        let at = Int.random(in: 0..<mutated.count, using: &random)
        mutated[at] ^= UInt8.random(in: 1...255, using: &random)
        return FuzzCase(
            label: "body byte \(at) changed", frames: [[], header, mutated],
            expected: ["MALFORMED", "UNAUTHENTICATED"],
            baseId: base.id)
    case 650..<700:
        let cut = Array(header.prefix(Int.random(in: 0..<header.count, using: &random)))
        return FuzzCase(
            label: "header cut to \(cut.count)", frames: [[], cut, body], expected: ["MALFORMED"],
            id: .ifPresent(base.id), baseId: base.id)
    case 700..<760:
        // A proper prefix of a JSON object is never a JSON document; signed or not, MALFORMED.
        let cut = Array(body.prefix(Int.random(in: 0..<body.count, using: &random)))
        let signed = Bool.random(using: &random)
        return FuzzCase(
            label: "body cut to \(cut.count)", frames: [[], signed ? signer.header(for: cut) : header, cut],
            expected: ["MALFORMED"], id: .ifPresent(base.id), baseId: base.id)
    case 760..<850:
        // A valid header (signed for the garbage, or for another body) with a garbage body.
        var garbage = fuzzRandomBytes(&random, upTo: 300)
        if Bool.random(using: &random) { garbage.insert(UInt8(ascii: "{"), at: 0) }
        let signed = Bool.random(using: &random)
        return FuzzCase(
            label: "garbage body (\(signed ? "signed" : "other signature"))",
            frames: [[], signed ? signer.header(for: garbage) : header, garbage], expected: ["MALFORMED"])
    case 850..<980:
        // Crafted breakage, validly signed: the body's own rules refuse it before anything is decided.
        let crafted = fuzzCraftedBodies[Int.random(in: 0..<fuzzCraftedBodies.count, using: &random)]
        var bytes = Array(crafted.text.replacingOccurrences(of: "%ID%", with: base.id).utf8)
        if Int.random(in: 0..<4, using: &random) == 0 {
            // Invalid UTF-8 inside the payload instead.
            let bad: [[UInt8]] = [
                [0xC3, 0x28], [0xC0, 0xAF], [0xFF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x01], [0x00],
            ]
            bytes =
                Array(#"{"actor":"root","id":"\#(base.id)","payload":{"s":""#.utf8)
                + bad[Int.random(in: 0..<bad.count, using: &random)]
                + Array(#""},"type":"RegisterUser"}"#.utf8)
            return FuzzCase(
                label: "invalid UTF-8 in a string", frames: [[], signer.header(for: bytes), bytes],
                expected: ["MALFORMED"], id: .ifPresent(base.id), baseId: base.id)
        }
        if Int.random(in: 0..<8, using: &random) == 0 {
            // Nesting far past any limit, inside the payload.
            let depth = Int.random(in: 65...20_000, using: &random)
            bytes =
                Array(#"{"actor":"root","id":"\#(base.id)","payload":{"deep":"#.utf8)
                + [UInt8](repeating: UInt8(ascii: "["), count: depth)
                + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
                + Array(#"},"type":"RegisterUser"}"#.utf8)
            return FuzzCase(
                label: "nesting \(depth) deep", frames: [[], signer.header(for: bytes), bytes], expected: ["MALFORMED"],
                id: .ifPresent(base.id), baseId: base.id)
        }
        return FuzzCase(
            label: "crafted \(crafted.text.prefix(60))", frames: [[], signer.header(for: bytes), bytes],
            expected: ["MALFORMED"],
            id: crafted.idReadable ? .required(base.id) : .ifPresent(base.id), baseId: base.id)
    case 980..<992:
        // Signed, well formed, but outside the clock window (or at the edges of Int64).
        let stamps: [Int64] = [-1_000, 1_000, 100_000, Int64.min, Int64.max, 0]
        let offset = stamps[Int.random(in: 0..<stamps.count, using: &random)]
        let now = Timestamp.now().secondsSinceEpoch
        let ts = offset == Int64.min || offset == Int64.max || offset == 0 ? offset : now + offset
        return FuzzCase(
            label: "ts \(ts)", frames: [[], signer.header(for: body, timestamp: ts), body],
            expected: ["UNAUTHENTICATED"],
            id: .required(base.id), baseId: base.id)
    case 992..<996:
        // Headers that are almost right.
        let sig = Hex.encode(
            RequestSignature.sign(secret: signer.secret, keyId: signer.keyId, timestamp: 1, body: body))
        let texts = [
            #"{"key":"svc","sig":"\#(sig)","ts":99999999999999999999,"v":1}"#,
            #"{"key":"svc","sig":"\#(sig)","ts":1,"v":2}"#, #"{"key":"svc","sig":"\#(sig.dropLast())","ts":1,"v":1}"#,
            #"{"key":"svc","sig":"\#(sig)","ts":1,"v":1,"x":0}"#, #"{"key":"svc","key":"svc","sig":"\#(sig)","ts":1}"#,
            #"{"key":"","sig":"\#(sig)","ts":1,"v":1}"#, #"{"key":"svc","sig":"\#(sig)","ts":"1","v":1}"#, "[]",
        ]
        let text = texts[Int.random(in: 0..<texts.count, using: &random)]
        return FuzzCase(
            label: "header \(text.prefix(50))", frames: [[], Array(text.utf8), body], expected: ["MALFORMED"],
            id: .ifPresent(base.id), baseId: base.id)
    default:
        // Over the 64 KiB limit (and under libzmq's ceiling): TOO_LARGE, whatever else is wrong.
        let size = Int.random(in: (64 * 1024 + 1)...(200 * 1024), using: &random)
        var big = Array(#"{"actor":"root","id":"\#(base.id)","payload":{"pad":""#.utf8)
        big +=
            [UInt8](repeating: UInt8(ascii: "p"), count: max(0, size - big.count - 30))
            + Array(#""},"type":"RegisterUser"}"#.utf8)
        return FuzzCase(
            label: "\(big.count)-byte body", frames: [[], signer.header(for: big), big], expected: ["TOO_LARGE"],
            id: .ifPresent(base.id), baseId: base.id)
    }
}

/// Whether changing `header[at]` to `byte` only flips the case of a hex letter of `sig`.
private func fuzzIsSigCaseFlip(_ header: [UInt8], at: Int, to byte: UInt8) -> Bool {
    let marker = Array(#""sig":""#.utf8)
    guard
        let start = (0...(header.count - marker.count)).first(where: { Array(header[$0..<$0 + marker.count]) == marker }
        )
    else { return false }
    let valueStart = start + marker.count
    guard (valueStart..<valueStart + 64).contains(at) else { return false }
    let old = header[at]
    let isHexLetter = { (b: UInt8) in (0x61...0x66).contains(b | 0x20) }
    return isHexLetter(old) && isHexLetter(byte) && (old | 0x20) == (byte | 0x20)
}

private func receiveFuzzReply(_ socket: ZMQSocket, timeoutMilliseconds: Int) throws -> [[UInt8]]? {
    guard try !zmqPollReadable([socket], timeoutMilliseconds: timeoutMilliseconds).isEmpty else { return nil }
    return try socket.receive(wait: false)
}

private func fuzzText(_ bytes: [UInt8]) -> String {
    String(decoding: bytes.prefix(400), as: UTF8.self)
}
