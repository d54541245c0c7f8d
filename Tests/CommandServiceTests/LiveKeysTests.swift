import Foundation
import StrataCore
import Synchronization
import Testing

@testable import CommandService

/// `LiveKeys`: what it puts in force when the key file changes, and what it keeps.
@Suite struct LiveKeysTests {
    private static func key(_ id: String, _ byte: UInt8, roles: [String]? = nil) -> KeyFile.Key {
        KeyFile.Key(id: id, secret: Array(repeating: byte, count: 32), scopes: [.commands], roles: roles)
    }

    @Test func aChangedFileIsPutInForceOnlyWhenItIsSoundAndKeepsTheServicesCurvePair() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("live-keys-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("keys.json").path
        let start = KeyFile(keys: [Self.key("a", 1), Self.key("b", 2)])
        let next = Mutex<KeyFile?>(start)
        let source = KeyFileSource(path: path) {
            guard let keys = next.withLock({ $0 }) else { throw KeyFileError("not JSON") }
            return keys
        }
        let lines = Mutex<[String]>([])
        let logger = Logger(label: "test") { line in lines.withLock { $0.append(line) } }
        try Data(start.json).write(to: URL(fileURLWithPath: path))
        let keys = try LiveKeys(start, source: source, logger: logger)
        /// Changes the file on disk (its size: the stamp differs however fast this runs), then
        /// lets a second pass so the next `follow` looks.
        func change(to keys: KeyFile?, _ padding: Int) throws {
            next.withLock { $0 = keys }
            let bytes = start.json + Array(repeating: UInt8(ascii: " "), count: padding)
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            usleep(1_050_000)
        }

        keys.follow()
        #expect(keys.generation == 0, "unchanged, and not a second since the start")

        try change(to: KeyFile(keys: [Self.key("a", 1), Self.key("b", 3), Self.key("c", 4)]), 1)
        keys.follow()
        #expect(keys.generation == 1)
        #expect(keys.current.keys.keys.map(\.id) == ["a", "b", "c"])
        let reread = "read the key file \(path) again: 3 keys; added c; changed b"
        #expect(lines.withLock { $0 }.last?.contains(reread) == true)

        // Not readable, a role the domain does not know, a CURVE pair of its own: kept as it was.
        try change(to: nil, 2)
        keys.follow()
        try change(to: KeyFile(keys: [Self.key("a", 1, roles: ["CASHIER"])]), 3)
        keys.follow()
        var curve = KeyFile(keys: [Self.key("a", 1)])
        let pair = try #require(CurveKeyPair.generate())
        try curve.setCurveServer(publicKey: pair.publicKey, secretKey: pair.secretKey)
        try change(to: curve, 4)
        keys.follow()
        #expect(keys.generation == 1)
        #expect(keys.current.keys.keys.map(\.id) == ["a", "b", "c"])
        let refusals = lines.withLock { $0 }.suffix(3)
        #expect(refusals.allSatisfy { $0.contains(" error test: the key file \(path) changed ") }, "\(refusals)")
        #expect(refusals.first?.contains("was not read: not JSON; the 3 keys read before stay in force") == true)
        #expect(refusals.dropFirst().first?.contains("unknown role CASHIER") == true)
        #expect(refusals.last?.contains("changed the service's own CURVE pair") == true)

        // The gate follows.
        var gate = FollowingGate(keys, scope: .commands, maximumBodyBytes: 1024)
        try change(to: KeyFile(keys: [Self.key("a", 1, roles: ["AGENT"])]), 5)
        keys.follow()
        #expect(keys.generation == 2)
        #expect(gate.roles["a"] == nil)
        gate.refresh()
        #expect(gate.roles["a"] == [.agent])
        #expect(lines.withLock { $0 }.last?.contains("again: 1 key; removed b, c; changed a") == true)
    }
}
