import Foundation
import StrataTesting
import Testing

/// What the command line does when its standard streams fail it: a full disk, a closed descriptor.
@Suite("Standard streams")
struct StandardStreamsTests {
    /// `strata … > /dev/full`: exit 2 naming the failure, never a crash after the work is done.
    @Test func outputThatCannotBeWrittenIsExitTwo() throws {
        try withTemporaryDirectory { dir in
            try strata(
                ["admin", "bootstrap", "--data", dir.path, "--id", "root", "--username", "root",
                 "--email", "root@example.com"], expecting: 0)
            let commands = [
                ["status", "--format", "json"], ["keys", "new", "svc", "--scope", "commands"], ["status", "--help"],
            ]
            for arguments in commands {
                let result = try shell(#""$0" "$@" --data "$DATA" > /dev/full"#, arguments, data: dir.path)
                #expect(result.exitCode == 2, "\(arguments): \(result.stderr)")
                let name = arguments[0] == "keys" ? "strata keys new" : "strata status"
                #expect(
                    result.stderr.hasSuffix("\(name): cannot write standard output: No space left on device\n"),
                    "\(arguments): \(result.stderr)")
            }
            // The key was made; only its id could not be printed.
            try strata(["keys", "new", "svc", "--scope", "commands", "--data", dir.path], expecting: 1)
        }
    }

    /// `strata … >&-`: the file the command opens next must not take descriptor 1 and receive
    /// the output (here the store's writer lock, which the success line used to land in).
    @Test func aClosedStandardOutputIsNotReusedForAFile() throws {
        try withTemporaryDirectory { dir in
            let result = try shell(
                #""$0" "$@" --data "$DATA" >&-"#,
                ["admin", "bootstrap", "--id", "root", "--username", "root", "--email", "root@example.com"],
                data: dir.path)
            #expect(result.exitCode == 0, "\(result.stderr)")
            let lock = try String(contentsOfFile: dir.path + "/events.db-lock", encoding: .utf8)
            #expect(!lock.contains("root"), "the lock file holds \(lock.debugDescription)")
            try strata(["verify", "--data", dir.path], expecting: 0)

            let keys = try shell(
                #""$0" "$@" --data "$DATA" >&- 2>&-"#, ["keys", "new", "svc", "--scope", "commands"], data: dir.path)
            #expect(keys.exitCode == 0)
            let file = try String(contentsOfFile: dir.path + "/keys.json", encoding: .utf8)
            #expect(file.hasPrefix("{\"keys\":[{\"id\":\"svc\""), "\(file)")
        }
    }

    /// Runs `strata` with `arguments` through `/bin/sh -c script`, `$DATA` set to `data`.
    private func shell(_ script: String, _ arguments: [String], data: String) throws -> ChildProcess.Result {
        try ChildProcess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", script, ChildProcess.product("strata").path] + arguments,
            environment: ["DATA": data])
    }
}
