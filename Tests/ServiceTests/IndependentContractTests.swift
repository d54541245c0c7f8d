import Foundation
import StrataCore
import StrataTesting
import Testing

/// The commands endpoint judged from outside Swift: Tests/IndependentChecks/contract.py (pyzmq,
/// written from CONTRACT.md alone, no code shared with the service) sends requests that break
/// several rules at once and checks that each reply carries the code the contract ranks first,
/// that decided commands are answered again as duplicates and undecided ones afresh, and that
/// framing, body fields and pipelining behave as the contract says.
@Suite struct IndependentContractTests {
    @Test func aClientWrittenFromTheContractFindsItKept() throws {
        let data = try ChildProcess.temporaryDirectory("strata-contract")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let service = try ServiceProcess(dataDirectory: data)
        let script = DocumentedClientTests.repository.appendingPathComponent("Tests/IndependentChecks/contract.py")

        let run = try ChildProcess.run(
            DocumentedClientTests.python(), [script.path],
            environment: ["STRATA_DATA": data.path, "STRATA_COMMANDS": service.commands])
        #expect(run.exitCode == 0, "stdout:\n\(run.stdout)\nstderr:\n\(run.stderr)")
        let summary = try JSONParser.parse(Array(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).utf8))
        #expect(summary["ok"] == .bool(true))
        #expect((summary["checks"]?.integerValue ?? 0) > 200, "the script ran its checks: \(run.stdout)")
        #expect(service.stop() == 0, "the service kept running through every malformed request")
    }
}
