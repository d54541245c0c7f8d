import Bus
import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

/// What the history endpoint logs while it cannot answer: a line for the trouble, not one per
/// request a client repeats while it lasts.
@Suite(.serialized) struct HistoryLogTests {
    /// An event changed outside Strata makes every page that holds it a STORE_FAILURE refusal.
    /// The service logged `history: cannot read the store` for each request (a projector asks
    /// again every second, for as long as the store stays so); now the first is logged and the
    /// others are counted into one line, here at the stop.
    @Test func aStoreThatCannotBeReadIsLoggedOnceNotPerRequest() throws {
        let data = try ChildProcess.temporaryDirectory("strata-history-log")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        // The first event's version made a REAL: a read that meets it refuses the row as damaged.
        let store = try SQLiteConnection(path: data.appendingPathComponent("events.db").path, mode: .readWrite)
        try store.execute("UPDATE events SET version = 1.5 WHERE position = 1")
        store.close()

        let context = try ZMQContext()
        let client = try service.historyClient(context)
        defer { client.close() }
        let requests = 30
        let body = Array(#"{"after":0,"limit":10}"#.utf8)
        for _ in 0..<requests {
            let reply = try #require(try client.request(body, timeoutMilliseconds: 30_000))
            let error = try JSONParser.parse(reply)["error"]
            #expect(error?["reason"] == .string("STORE_FAILURE"), "\(String(decoding: reply, as: UTF8.self))")
        }
        #expect(service.stop() == 0, "\(service.log)")

        let lines = service.log.split(separator: "\n").filter { $0.contains("history: cannot read the store") }
        #expect(lines.count == 2, "\(service.log)")
        #expect(lines.first?.contains("history: cannot read the store: ") == true, "\(service.log)")
        #expect(
            lines.last?.contains("history: cannot read the store \(requests - 1) more times in ") == true,
            "\(service.log)")
        #expect(lines.last?.contains(", the last: ") == true, "\(service.log)")
        #expect(lines.last?.contains("damaged") == true, "\(service.log)")
    }
}
