// A child process for the crash tests: appends group commits of multi-stream
// commands to the store at argv[1] until it is killed, printing "ack <command id>"
// (flushed) only after each append call has returned, i.e. after the commit.
// A test SIGKILLs it at a random moment and checks the store it leaves behind.
import EventStore
import Foundation
import StrataCore

/// Unbuffered: a line is out of the process the moment this returns.
func say(_ text: String) { FileHandle.standardOutput.write(Data(text.utf8)) }

guard CommandLine.arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: StoreCrashWriter STORE [PREFIX]\n".utf8))
    exit(2)
}
let prefix = CommandLine.arguments.count >= 3 ? CommandLine.arguments[2] : "c"

do {
    let store = try SQLiteEventStore(path: CommandLine.arguments[1])
    say("ready\n")
    var n = 0
    while true {
        let batchSize = 1 + n % 40
        var commands: [CommandWrite] = []
        for _ in 0..<batchSize {
            n += 1
            let id = "\(prefix)\(n)"
            let padding = String(repeating: "x", count: 200)
            // Each command touches three streams: its loan, an agent's earnings, a shared stream.
            let events = try [
                NewEvent(stream: StreamName("loan-\(id)")!, type: "CrashTestPayment", schemaVersion: 1,
                         data: ["command": .string(id), "part": 1, "padding": .string(padding)]),
                NewEvent(stream: StreamName("agent-A\(n % 7)")!, type: "CrashTestCommission", schemaVersion: 1,
                         data: ["command": .string(id), "part": 2]),
                NewEvent(stream: StreamName("loan-\(id)")!, type: "CrashTestClosed", schemaVersion: 1,
                         data: ["command": .string(id), "part": 3]),
            ]
            commands.append(
                try CommandWrite(
                    commandId: id, bodyDigest: HashChain.sha256(Array(id.utf8)), actor: "crash-test",
                    commandType: "CrashTest", decision: .append(events, expectations: [StreamName("loan-\(id)")!: .exactly(0)])))
        }
        _ = try store.append(commands)
        say(commands.map { "ack \($0.commandId)\n" }.joined())
    }
} catch {
    FileHandle.standardError.write(Data("StoreCrashWriter: \(error)\n".utf8))
    exit(1)
}
