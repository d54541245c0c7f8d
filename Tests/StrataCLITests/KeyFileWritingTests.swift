import Foundation
import StrataCore
import StrataTesting
import Testing

/// How `strata keys new` reads and rewrites a key file that others read and write too.
@Suite("strata keys new: the key file")
struct KeyFileWritingTests {
    /// Every process reads, checks and replaces the file under one lock: none drops another's
    /// key, and of those asking for one id, exactly one gets it.
    @Test func keysMadeAtOnceAllStayAndAnIdIsGivenOutOnce() throws {
        try withTemporaryDirectory { dir in
            let path = dir.path + "/keys.json"
            let ids = (1...20).map { "k\($0)" }
            let distinct = ids.map { ["keys", "new", $0, "--scope", "history", "--data", dir.path] }
            let same = Array(repeating: ["keys", "new", "same", "--scope", "history", "--data", dir.path], count: 10)
            // Interleaved, so the repeated id races the others too.
            let commands = zip(distinct.prefix(10), same).flatMap { [$0, $1] } + distinct.dropFirst(10)
            let results = try strataAtOnce(commands)
            for (command, result) in zip(commands, results) where command[2] != "same" {
                #expect(result.exitCode == 0, "\(command): \(result.stderr)")
            }
            let sameResults = zip(commands, results).filter { $0.0[2] == "same" }.map(\.1)
            #expect(sameResults.filter { $0.exitCode == 0 }.count == 1, "\(sameResults.map(\.stderr))")
            #expect(sameResults.filter { $0.exitCode == 1 }.count == 9, "\(sameResults.map(\.stderr))")
            for refused in sameResults where refused.exitCode == 1 {
                #expect(refused.stderr.contains("a key named same exists already"), "\(refused.stderr)")
            }
            let file = try readKeyFile(path)
            #expect(file.keys.map(\.id).sorted() == (ids + ["same"]).sorted())
            #expect(try permissions(path) == 0o600)
            #expect(try permissions(path + ".lock") == 0o600)
        }
    }

    /// A key file kept elsewhere (a mounted secret) and linked into the data directory: the
    /// key goes into the file the link leads to, and the link stays a link.
    @Test func aKeyFileThatIsALinkIsWrittenWhereItLeads() throws {
        try withTemporaryDirectory { dir in
            let secrets = dir.path + "/secrets"
            try strata(["keys", "new", "first", "--scope", "commands", "--data", secrets], expecting: 0)
            let data = dir.path + "/data"
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            let link = data + "/keys.json"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "../secrets/keys.json")
            try strata(["keys", "new", "second", "--scope", "history", "--data", data], expecting: 0)
            let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: link)
            #expect(destination == "../secrets/keys.json", "the link stays a link")
            #expect(try readKeyFile(secrets + "/keys.json").keys.map(\.id) == ["first", "second"])
            #expect(try permissions(secrets + "/keys.json") == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: data) == ["keys.json"])
        }
    }

    /// A link to a key file not made yet: the first key makes the file where the link leads.
    @Test func aLinkToNoFileYetMakesTheFileWhereItLeads() throws {
        try withTemporaryDirectory { dir in
            let secrets = dir.path + "/secrets"
            try FileManager.default.createDirectory(atPath: secrets, withIntermediateDirectories: true)
            let link = dir.path + "/keys.json"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: secrets + "/keys.json")
            try strata(["keys", "new", "first", "--scope", "commands", "--keys", link], expecting: 0)
            let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: link)
            #expect(destination == secrets + "/keys.json", "the link stays a link")
            #expect(try readKeyFile(secrets + "/keys.json").keys.map(\.id) == ["first"])
        }
    }

    /// A misspelt member would leave its key wider than meant (`"role"` narrows nothing) and
    /// be dropped by the next rewrite: every command reading the file refuses it, naming it.
    @Test func anUnknownMemberIsRefusedByEveryReaderAndTheFileIsLeftAsItIs() throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "agents", "--scope", "commands", "--data", dir.path], expecting: 0)
            let path = dir.path + "/keys.json"
            let made = try String(contentsOfFile: path, encoding: .utf8)
            let misspelt = made.replacingOccurrences(of: #""id":"agents","#, with: #""id":"agents","role":["AGENT"],"#)
            try #require(misspelt != made)
            try writePrivate(Array(misspelt.utf8), to: path)
            let message = "\(path): key agents: unknown member 'role' "
                + "(known: curvePublic, curveSecret, id, roles, scopes, secret)"
            let added = try strata(["keys", "new", "other", "--scope", "history", "--data", dir.path], expecting: 2)
            #expect(added.stderr == "strata keys new: \(message)\n")
            // With an endpoint it cannot bind, so a serve that took the file would end, not run on.
            let any = "tcp://127.0.0.1:*"
            let served = try strata(
                ["serve", "--data", dir.path, "--commands", any, "--events", any, "--history", "none://"], expecting: 2)
            #expect(served.stderr.contains(message), "\(served.stderr)")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == misspelt)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/events.db"))
        }
    }

    /// The same at the top of the file and in the service's CURVE pair.
    @Test(arguments: [
        (#"{"keys":[],"key":[]}"#, "unknown member 'key' (known: curveServer, keys)"),
        (
            #"{"curveServer":{"public":"\#(serverPublic)","Secret":"x"},"keys":[]}"#,
            "curveServer: unknown member 'Secret' (known: public, secret)"
        ),
    ])
    func unknownMembersElsewhereAreRefusedToo(_ json: String, _ message: String) throws {
        try withTemporaryDirectory { dir in
            let path = dir.path + "/keys.json"
            try writeText(json, to: path)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            let result = try strata(["keys", "new", "svc", "--scope", "history", "--data", dir.path], expecting: 2)
            #expect(result.stderr == "strata keys new: \(path): \(message)\n")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == json)
        }
    }
}

/// The server public key of libzmq's own CURVE documentation (zmq_curve(7)).
private let serverPublic = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"

/// Starts one `strata` process for each of `commands`, all at once, and waits for every one:
/// each one's exit code and standard error.
func strataAtOnce(_ commands: [[String]]) throws -> [(exitCode: Int32, stderr: String)] {
    let executable = ChildProcess.product("strata")
    let environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STRATA_") }
    var running: [(process: Process, err: Pipe)] = []
    for arguments in commands {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let err = Pipe()
        process.standardError = err
        try process.run()
        running.append((process, err))
    }
    return running.map { process, err in
        // Each says a line at most: reading one to its end while the others run blocks none.
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stderr, as: UTF8.self))
    }
}

/// The key file holds every key's secret: like the checkpoint key, it must be its owner's alone.
@Suite("The key file's mode")
struct KeyFileModeTests {
    /// A data directory that `keys new` (or `serve`, `project`, `admin bootstrap`) makes is its
    /// owner's alone too: the stores and the read models live in it.
    @Test func aDirectoryMadeForTheKeyFileIsPrivate() throws {
        try withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("new/data").path
            try strata(["keys", "new", "svc", "--scope", "commands", "--data", data], expecting: 0)
            #expect(try permissions(data) == 0o700)
            #expect(try permissions(dir.appendingPathComponent("new").path) == 0o700)
            #expect(try permissions(data + "/keys.json") == 0o600)
            // So is one that the first admin's bootstrap makes.
            let other = dir.appendingPathComponent("bootstrapped").path
            try strata(
                ["admin", "bootstrap", "--id", "a1", "--username", "root", "--email", "r@example.com", "--data", other],
                expecting: 0)
            #expect(try permissions(other) == 0o700)
        }
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660])
    func aKeyFileOthersMayReadIsRefusedByEveryReader(_ mode: Int) throws {
        try withTemporaryDirectory { dir in
            try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", dir.path], expecting: 0)
            let path = dir.path + "/keys.json"
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            let message =
                "the key file \(path) has mode 0\(String(mode, radix: 8)); it holds secrets and must be readable by "
                + "its owner only (chmod 600 \(path))\n"
            let any = "tcp://127.0.0.1:*"
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            for command in [
                ["serve", "--commands", any, "--events", any, "--history", any], ["up"], ["send", "-"],
                ["project", "readmodels"], ["keys", "new", "another", "--scope", "history"],
            ] {
                let result = try strata(command + ["--data", dir.path], expecting: 2)
                let name = command[0] == "keys" ? "keys new" : command[0]
                #expect(result.stderr == "strata \(name): \(message)", "\(command)")
            }
            // `keys new` did not rewrite it 0600, which would hide that its secrets may have been read.
            #expect(try permissions(path) == mode)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
            #expect(!FileManager.default.fileExists(atPath: dir.path + "/events.db"), "serve created nothing")
            // Its owner's alone again, it is served as ever.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
            try strata(["send", "-", "--data", dir.path, "--commands", "tcp://127.0.0.1:1"], expecting: 0)
        }
    }

    /// A key file that cannot be read is refused with the system's reason by the commands that
    /// rewrite it as by those that read it: a directory was told to `chmod 600` (or was "cannot
    /// read" without a why), and a file of gigabytes was read whole, unbounded.
    @Test func aKeyFileThatCannotBeReadIsRefusedWithTheReasonByEveryReader() throws {
        try withTemporaryDirectory { dir in
            let path = dir.path + "/keys.json"
            let oversized = dir.path + "/oversized.json"
            try writePrivate([UInt8](repeating: UInt8(ascii: " "), count: (16 << 20) + 1), to: oversized)
            let commands = [["send", "-"], ["keys", "new", "svc", "--scope", "history"], ["keys", "revoke", "svc"]]
            for mode in [0o700, 0o755] {
                try FileManager.default.createDirectory(
                    atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: mode])
                defer { try? FileManager.default.removeItem(atPath: path) }
                for command in commands {
                    let result = try strata(command + ["--data", dir.path], expecting: 2)
                    let name = command[0] == "keys" ? "keys \(command[1])" : command[0]
                    #expect(
                        result.stderr == "strata \(name): cannot read the key file \(path): Is a directory\n",
                        "\(command), mode \(String(mode, radix: 8))")
                }
            }
            for command in commands {
                let result = try strata(command + ["--keys", oversized], expecting: 2)
                #expect(result.stderr.contains("cannot read the key file \(oversized): it holds more than 16 MiB"),
                    "\(command): \(result.stderr)")
            }
        }
    }
}
