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

    /// serve's own settings, which `up` refused as unknown options, are checked by `up` as serve
    /// checks them: a value serve refuses is refused with serve's message, exit 2, before
    /// anything starts (no store made), where the serve it started would refuse it and stop
    /// everything. `up --help` lists them as `serve --help` does.
    @Test func aServeSettingOutOfRangeIsRefusedWithServesMessageBeforeAnythingStarts() throws {
        try withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            // Ports of the system's choosing, never the default ones, should anything start.
            let endpoints = ["commands", "events", "history"].flatMap { ["--\($0)", "tcp://127.0.0.1:*"] }
            for (option, value, range) in [
                ("publisher-hwm", "0", "1...10000000"), ("publisher-hwm", "10000001", "1...10000000"),
                ("checkpoint-interval", "86401", "0...86400"), ("checkpoint-interval", "-1", "0...86400"),
                ("max-store-bytes", "65535", "65536...\(Int64.max)"),
                ("max-store-bytes", "1GB", "65536...\(Int64.max)"), ("cache-mib", "0", "1...65536"),
                ("cache-mib", "65537", "1...65536"),
            ] {
                let expected = "--\(option) must be an integer in \(range), got '\(value)'"
                let arguments = ["--data", data, "--\(option)", value] + endpoints
                let serve = try strata(["serve"] + arguments, expecting: 2)
                #expect(serve.stderr == "strata serve: \(expected)\n")
                let up = try strata(["up"] + arguments, expecting: 2)
                #expect(up.stderr == "strata up: \(expected)\n")
                let printed = try strata(["up", "--print-services", "--\(option)", value], in: dir, expecting: 2)
                #expect(printed.stdout.isEmpty && printed.stderr == "strata up: \(expected)\n")
            }
            #expect(!FileManager.default.fileExists(atPath: data + "/events.db"))

            let options = ["--publisher-hwm ", "--checkpoint-interval ", "--max-store-bytes ", "--cache-mib "]
            func optionLines(_ command: String) throws -> [String] {
                let help = try strata([command, "--help"], expecting: 0).stdout
                // An option's row, its columns as wide as the command's longest option.
                return help.split(separator: "\n").filter { $0.hasPrefix("  --") }
                    .map { $0.split(separator: " ").joined(separator: " ") }
                    .filter { options.contains(where: $0.hasPrefix) }
            }
            let served = try optionLines("serve")
            #expect(served.count == 4)
            #expect(try optionLines("up") == served)
        }
    }

    /// An events or history endpoint the projectors cannot connect to as written (a port serve
    /// chooses, or the host `*`) is refused before anything starts, where `up` started serve on
    /// it and both projectors ended at once (`zmq_connect …: Invalid argument`) and stayed down,
    /// serve running alone with nothing kept up to date. So is `inproc://`, which reaches only
    /// within the process that binds it: serve said it was ready and the projectors, in processes
    /// of their own, asked history for an answer that could never come, for as long as `up` ran.
    @Test func anEndpointTheProjectorsCannotConnectToIsRefusedBeforeAnythingStarts() throws {
        try withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)
            try strata(
                ["admin", "bootstrap", "--id", "root", "--username", "root", "--email", "root@example.com",
                 "--data", data], expecting: 0)
            let fixed = try ["commands", "events", "history"].map { ($0, "tcp://127.0.0.1:\(try freeLoopbackPort())") }
            for (name, endpoint) in [
                ("events", "tcp://127.0.0.1:*"), ("history", "tcp://127.0.0.1:0"),
                ("events", "tcp://*:\(try freeLoopbackPort())"), ("history", "ipc://*"),
                ("events", "inproc://events"), ("history", "inproc://history"),
            ] {
                let endpoints = fixed.flatMap { ["--\($0.0)", $0.0 == name ? endpoint : $0.1] }
                let up = try StrataProcess(["up", "--data", data] + endpoints)
                defer { up.stop() }
                #expect(up.waitForExit(timeout: 30) == 2, "\(endpoint): \(up.log)")
                let refusal = "strata up: the \(name) endpoint \(endpoint) "
                    + (endpoint.hasPrefix("inproc://")
                        ? "is one no other process can reach" : "is not one the projectors can connect to")
                #expect(up.log.hasPrefix(refusal), "\(up.log)")
                #expect(!up.log.contains("started serve"), "\(up.log)")
            }
            #expect(!FileManager.default.fileExists(atPath: data + "/checkpoint.key"))
        }
    }
}
