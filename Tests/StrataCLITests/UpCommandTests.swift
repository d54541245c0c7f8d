import Foundation
import StrataTesting
import Testing

@Suite("strata up: what it checks before starting anything")
struct UpCommandTests {
    /// A metrics directory that cannot be made is named with what stands in the way, where
    /// the message was Foundation's "NSCocoaErrorDomain error 512".
    @Test func aMetricsDirectoryUnderAFileIsRefusedNamingTheFile() throws {
        try withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            let file = dir.appendingPathComponent("file").path
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            for metrics in [file + "/metrics", file] {
                let result = try strata(["up", "--data", data, "--metrics-dir", metrics], expecting: 2)
                let expected = "cannot create the metrics directory \(metrics): \(file) is a file, not a directory"
                #expect(result.stderr == "strata up: \(expected)\n")
            }
        }
    }
}
