import Bus
import CommandService
import Foundation
import StrataCore
import StrataTesting
import Testing

// What several end-to-end suites need alike.

/// The next reply on a DEALER, which receives `["", reply]`: the reply's bytes. Records an
/// issue naming the service's log, and throws, when none comes within the timeout.
func receiveReply(
    on socket: ZMQSocket, from service: ServiceProcess, timeoutMilliseconds: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> [UInt8] {
    guard try !zmqPollReadable([socket], timeoutMilliseconds: timeoutMilliseconds).isEmpty,
        let reply = try socket.receive(wait: false)
    else {
        Issue.record(
            "no reply within \(timeoutMilliseconds / 1000) s; service log:\n\(service.log)", sourceLocation: sourceLocation)
        throw ServiceProcessError("no reply")
    }
    #expect(reply.count == 2 && reply.first?.isEmpty == true, "a DEALER receives [\"\", reply]", sourceLocation: sourceLocation)
    return reply.last ?? []
}

/// The raw bytes of each element of a reply's top-level `"events":[…]` array, exactly as
/// sent (no re-serialising), or nil when the reply does not have that shape.
func historyEventSlices(_ bytes: [UInt8]) -> [[UInt8]]? {
    let marker = Array(#""events":["#.utf8)
    guard bytes.count >= marker.count,
        let start = (0...(bytes.count - marker.count)).first(where: { bytes[$0..<($0 + marker.count)].elementsEqual(marker) })
    else { return nil }
    var index = start + marker.count
    var slices: [[UInt8]] = []
    while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "]") { return slices }
        if byte == UInt8(ascii: ",") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
            index += 1
            continue
        }
        guard byte == UInt8(ascii: "{") else { return nil }
        let begin = index
        var depth = 0
        var inString = false
        var escaped = false
        repeat {
            let current = bytes[index]
            if inString {
                if escaped {
                    escaped = false
                } else if current == UInt8(ascii: "\\") {
                    escaped = true
                } else if current == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if current == UInt8(ascii: "\"") {
                inString = true
            } else if current == UInt8(ascii: "{") || current == UInt8(ascii: "[") {
                depth += 1
            } else if current == UInt8(ascii: "}") || current == UInt8(ascii: "]") {
                depth -= 1
            }
            index += 1
        } while depth > 0 && index < bytes.count
        guard depth == 0 else { return nil }
        slices.append(Array(bytes[begin..<index]))
    }
    return nil
}

/// Every file under `directory` (WAL, shm and lock files included): its name and bytes.
func filesUnder(_ directory: URL) throws -> [(path: String, bytes: [UInt8])] {
    let enumerator = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey]))
    var files: [(String, [UInt8])] = []
    for case let url as URL in enumerator where (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true {
        files.append((url.lastPathComponent, Array(try Data(contentsOf: url))))
    }
    return files.sorted { $0.0 < $1.0 }
}

/// `EraseSubject` of one borrower's account by the test admin, with command id `erase-ACCOUNT`
/// unless given another.
func accountErasure(_ account: String, id: String? = nil, reason: String = "asked to") -> CommandBody {
    CommandBody(
        id: id ?? "erase-\(account)", type: "EraseSubject", actor: ServiceProcess.admin,
        payload: ["subjectId": .string(account), "kind": "ACCOUNT", "reason": .string(reason)])
}

/// The KiB the service holds above `baseline` once it has given memory back: read every half
/// second until it is below `boundKiB`, for 20 s at most.
func keptKiB(
    by service: ServiceProcess, above baseline: Int, waitingBelow boundKiB: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> Int {
    var kept = Int.max
    let deadline = ContinuousClock.now + .seconds(20)
    while kept >= boundKiB, ContinuousClock.now < deadline {
        Thread.sleep(forTimeInterval: 0.5)
        kept = try #require(service.residentKiB, sourceLocation: sourceLocation) - baseline
    }
    return kept
}
