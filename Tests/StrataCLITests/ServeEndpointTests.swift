import Foundation
import StrataTesting
import Testing

/// `strata serve` on an endpoint no client can reach: inproc:// lives within the process that
/// binds it, and serve said it was ready on it.
@Suite struct ServeEndpointTests {
    @Test(arguments: ["--commands", "--events", "--history"])
    func anInprocEndpointIsRefusedBeforeAnythingIsMade(option: String) throws {
        try withTemporaryDirectory { directory in
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", directory.path], expecting: 0)
            var endpoints = [
                "--commands": "tcp://127.0.0.1:\(try freeLoopbackPort())",
                "--events": "tcp://127.0.0.1:\(try freeLoopbackPort())",
                "--history": "tcp://127.0.0.1:\(try freeLoopbackPort())",
            ]
            endpoints[option] = "inproc://strata"
            let serve = try StrataProcess(
                ["serve", "--data", directory.path] + endpoints.flatMap { [$0.key, $0.value] })
            let exit = serve.waitForExit(timeout: 30)
            #expect(exit == 2, "\(serve.log)")
            #expect(serve.log.contains("inproc://strata is one no client can reach"), "\(serve.log)")
            #expect(!serve.log.contains(" ready "), "\(serve.log)")
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("events.db").path))
        }
    }
}
