import Foundation
import StrataTesting
import Testing

@Suite struct DemoFailureTests {
    /// With no projector running, the demo's wait for the read models runs out (exit 1): it still
    /// says what it sent and what the store appended before that, since those stay.
    @Test func aDemoThatStopsHalfwaySaysWhatItAppended() throws {
        let data = try ChildProcess.temporaryDirectory("strata-demo-half")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        defer { service.stop() }
        let before = try service.store().head()
        let result = try ChildProcess.strata(
            ["demo", "--prefix", "half", "--data", data.path, "--commands", service.commands, "--timeout", "3"])
        #expect(result.exitCode == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("did not reach position"), "\(result.stderr)")
        let head = try service.store().head()
        #expect(head > before)
        #expect(
            result.stdout.contains("appended \(head - before) events, positions \(before + 1) to \(head)\n"),
            "\(result.stdout)")
    }
}
