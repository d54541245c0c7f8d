import Bus
import CommandService
import Domain
import Events
import Foundation
import StrataCore

/// The parsers that hostile bytes reach, each as a function of one input that traps when a
/// property fails. libFuzzer drives them with coverage feedback (`scripts/fuzz`); the plain
/// build replays a corpus through the same functions, so what a fuzzing run found once is
/// checked by every test run.
enum FuzzTarget: String, CaseIterable {
    /// The strict JSON parser: whatever it accepts prints canonically, and the canonical
    /// print parses back to the same value and prints the same bytes again. Noting numbers,
    /// it reads the same documents the same way, and otherwise only those with numbers a
    /// value cannot hold, a `null` standing wherever it says one stood.
    case json
    /// A command body, signed as a client signs it, through the gate and the command's
    /// payload rules: any answer is one of the contract's codes, a payload with a number it
    /// cannot hold is never accepted, and a command the rules accept reads back the same
    /// from the payload it prints.
    case command
    /// A history request body, signed, through the gate and the range checks.
    case history
    /// Stored event data (the first byte picks the event type): decoding never traps, what
    /// the fast canonical reader accepts the general path reads as the same event, and the
    /// fast reader reads the canonical encoding of any event it read back as that event.
    case event
    /// A request's header frame: what the canonical reader accepts the parser reads as the
    /// same header, and the canonical print of a header the parser reads is read back the
    /// same by the canonical reader whenever its key id and timestamp fit that form.
    case header

    func run(_ input: [UInt8]) {
        switch self {
        case .json: fuzzJSON(input)
        case .command: fuzzCommand(input)
        case .history: fuzzHistory(input)
        case .event: fuzzEvent(input)
        case .header: fuzzHeader(input)
        }
    }
}

private func fuzzJSON(_ input: [UInt8]) {
    let noting = try? JSONParser.parseNotingNumbers(input)
    if let noting {
        for number in noting.numbers {
            precondition(fuzzValue(at: number.path, in: noting.value) == .null, "no null where a number was noted")
        }
    }
    guard let value = try? JSONParser.parse(input) else {
        precondition(noting == nil || noting?.numbers.isEmpty == false, "noting numbers took a document without any")
        return
    }
    precondition(noting?.value == value && noting?.numbers.isEmpty == true, "noting numbers read another value")
    let canonical = CanonicalJSON.bytes(value)
    guard let again = try? JSONParser.parse(canonical) else { fatalError("canonical bytes do not parse") }
    precondition(again == value, "the canonical print reads back as another value")
    precondition(CanonicalJSON.bytes(again) == canonical, "printing canonically is not idempotent")
}

private func fuzzValue(at path: [JSONParser.UnrepresentableNumber.Step], in value: JSONValue) -> JSONValue? {
    var value = value
    for step in path {
        switch (step, value) {
        case (.key(let key), .object(let members)):
            guard let member = members[key] else { return nil }
            value = member
        case (.index(let index), .array(let elements)):
            guard elements.indices.contains(index) else { return nil }
            value = elements[index]
        default: return nil
        }
    }
    return value
}

private let fuzzKey = KeyFile.Key(id: "fuzz", secret: [UInt8](repeating: 7, count: 32), scopes: [.commands, .history])
private let fuzzKeys = KeyFile(keys: [fuzzKey])
private let fuzzNow: Int64 = 1_795_000_000
private let contractCodes: Set<StrataError.Code> = [.malformed, .tooLarge, .invalid]

/// The ROUTER's view of a DEALER sending `body`, signed with the fuzz key.
private func signedFrames(_ body: [UInt8]) -> [[UInt8]] {
    let header = RequestSignature.header(secret: fuzzKey.secret, keyId: fuzzKey.id, timestamp: fuzzNow, body: body)
    return [[1, 2, 3], [], header.json, body]
}

private func fuzzCommand(_ input: [UInt8]) {
    let gate = RequestGate(keys: fuzzKeys, scope: .commands)
    switch gate.admit(signedFrames(input), now: fuzzNow, readBody: CommandBody.parse) {
    case nil: fatalError("a request with a routing id went unanswered")
    case .failure(let refused):
        precondition(contractCodes.contains(refused.error.code), "a signed body refused as \(refused.error.code)")
    case .success(let admitted):
        let context = DecisionContext(now: Timestamp(secondsSinceEpoch: fuzzNow))
        let body = admitted.body
        let parsed = Command.parse(
            type: body.type, payload: body.payload, numbers: body.payloadNumbers, context: context)
        guard case .success(let valid) = parsed else { return }
        precondition(body.payloadNumbers.isEmpty, "a payload with a number it cannot hold was accepted")
        guard case .object(let printed) = valid.command.payloadJSON,
            case .success(let again) = Command.parse(type: body.type, payload: printed, context: context)
        else { fatalError("an accepted command's own payload is refused") }
        precondition(again.command == valid.command, "an accepted command reads back as another")
    }
}

private func fuzzHistory(_ input: [UInt8]) {
    let gate = RequestGate(keys: fuzzKeys, scope: .history)
    switch gate.admit(signedFrames(input), now: fuzzNow, readBody: HistoryRequest.parse) {
    case nil: fatalError("a request with a routing id went unanswered")
    case .failure(let refused):
        precondition(contractCodes.contains(refused.error.code), "a signed body refused as \(refused.error.code)")
    case .success(let admitted):
        // Values out of range pass the gate and are refused next, as INVALID with every problem.
        let request = admitted.body
        if let problem = request.problem {
            precondition(problem.code == .invalid && problem.details?.isEmpty == false, "a history problem is not INVALID")
        } else {
            precondition(request.after >= 0 && (1...HistoryRequest.maximumLimit).contains(request.limit))
        }
    }
}

private func fuzzEvent(_ input: [UInt8]) {
    guard let first = input.first else { return }
    let types = EventRegistry.eventTypes
    let type = types[Int(first) % types.count]
    let data = Array(input.dropFirst())
    if let fast = CanonicalEventDecoder.decode(type: type, data: data) {
        precondition(fast.eventType == type, "the fast reader read \(type) as \(fast.eventType)")
        precondition(sameAsTheGeneralPath(fast.payload, data), "the fast reader and the general path disagree")
        guard let encoded = try? CanonicalJSON.encode(fast.payload),
            let again = CanonicalEventDecoder.decode(type: type, data: encoded)
        else { fatalError("the fast reader refuses the canonical encoding of what it read") }
        precondition(again == fast, "an event read back from its canonical encoding is another")
    }
    for version in 0...3 {
        _ = try? EventRegistry.decode(type: type, schemaVersion: version, data: data)
    }
}

private func fuzzHeader(_ input: [UInt8]) {
    let parsed = RequestHeader(parsing: input)
    if let canonical = RequestHeader(canonical: input) {
        precondition(parsed == canonical, "the canonical reader and the parser disagree")
    }
    precondition(RequestHeader(json: input) == parsed, "a header reads differently through init(json:)")
    guard let parsed else { return }
    let plainKey = parsed.keyId.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }
    if plainKey && parsed.timestamp.magnitude < 1_000_000_000_000_000_000 {
        precondition(RequestHeader(canonical: parsed.json) == parsed, "the canonical reader refuses a canonical header")
    }
}

/// Whether the general path (the strict parser, then Foundation's decoder: how every event
/// was read before the fast reader) reads `data` as the same event.
private func sameAsTheGeneralPath<E: DomainEvent>(_ fast: E, _ data: [UInt8]) -> Bool {
    guard (try? JSONParser.parse(data)) != nil, let general = try? JSONDecoder().decode(E.self, from: Data(data)) else {
        return false
    }
    return general == fast
}
