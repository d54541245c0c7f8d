import Foundation
import ProjectorRuntime
import StrataTesting
import Testing

/// An event store emptied or removed beside projections that applied its events is not taken
/// for a new store: `serve` and `admin bootstrap` refuse to begin a second history at position 1
/// under read models and an audit log of the first.
@Suite struct EarlierHistoryTests {
    @Test(arguments: ["emptied", "removed"])
    func aStoreGoneFromUnderItsProjectionsIsNotBegunAgain(how: String) throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let data = history.data.path
        let store = data + "/events.db"
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store + suffix) }
        if how == "emptied" {
            try #require(truncate(store, 0) == 0)
        } else {
            try FileManager.default.removeItem(atPath: store)
        }
        _ = try strata(["keys", "new", "svc", "--scope", "commands,history", "--data", data], expecting: 0)

        let bootstrap = try strata(
            ["admin", "bootstrap", "--id", "root", "--username", "root", "--email", "root@example.com", "--data", data],
            expecting: 1)
        #expect(bootstrap.stderr.contains("readmodels.db (readmodels) has applied events up to position \(history.head)"))
        #expect(bootstrap.stderr.contains("strata restore"), "\(bootstrap.stderr)")

        let ports = try (0..<3).map { _ in try freeLoopbackPort() }
        let serve = try StrataProcess(
            ["serve", "--data", data] + zip(["--commands", "--events", "--history"], ports).flatMap {
                [$0, "tcp://127.0.0.1:\($1)"]
            })
        let exit = serve.waitForExit(timeout: 30)
        if exit == nil { _ = serve.stop() }
        #expect(exit == 1, "serve begins no new history beside the projections: \(serve.log)")
        #expect(serve.log.contains("has applied events up to position \(history.head)"), "\(serve.log)")
        // Nothing was begun: the store is as the test left it.
        let size = (try? FileManager.default.attributesOfItem(atPath: store)[.size] as? NSNumber)?.intValue
        #expect(how == "emptied" ? size == 0 : size == nil, "\(String(describing: size)) bytes at \(store)")

        // With the projections moved away, a new history may begin.
        for name in ["readmodels.db", "audit.db"] {
            try FileManager.default.moveItem(atPath: data + "/" + name, toPath: data + "/old-" + name)
        }
        _ = try strata(
            ["admin", "bootstrap", "--id", "root", "--username", "root", "--email", "root@example.com", "--data", data],
            expecting: 0)
    }

    /// Versions before relative paths in a config file were taken from its directory read them
    /// from the working directory: after an upgrade, the same file names another data directory,
    /// where `serve` would have begun a new history beside the recorded one.
    @Test func aConfigFilesRelativeDataDirectoryThatMovedBeginsNoNewHistory() throws {
        let history = try KnownHistory.make()
        defer { history.remove() }
        let place = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: place) }
        try FileManager.default.createDirectory(atPath: place.path + "/etc", withIntermediateDirectories: true)
        let config = place.path + "/etc/strata.json"
        let name = history.data.lastPathComponent
        try writeConfig(["data": name], to: config)
        let working = history.data.deletingLastPathComponent()
        let moved = place.path + "/etc/" + name

        let bootstrap = try strata(
            ["admin", "bootstrap", "--id", "root", "--username", "root", "--email", "root@example.com",
             "--config", config], in: working, expecting: 2)
        #expect(bootstrap.stderr.contains("sets data to '\(name)', which is \(moved)"), "\(bootstrap.stderr)")
        #expect(bootstrap.stderr.contains("holds a store with events up to position \(history.head)"))
        let ports = try (0..<3).map { _ in try freeLoopbackPort() }
        let endpoints = zip(["--commands", "--events", "--history"], ports).flatMap { [$0, "tcp://127.0.0.1:\($1)"] }
        for command in ["serve", "up"] {
            let refused = try strata([command, "--config", config] + endpoints, in: working, expecting: 2)
            #expect(refused.stderr.contains("as an absolute path"), "\(refused.stderr)")
        }
        // Nothing was made where the config file now points.
        #expect(!FileManager.default.fileExists(atPath: moved))

        // Where the working directory holds no store, the config file's directory is the place.
        _ = try strata(
            ["admin", "bootstrap", "--id", "root", "--username", "root", "--email", "root@example.com",
             "--config", config], in: place, expecting: 0)
        #expect(FileManager.default.fileExists(atPath: moved + "/events.db"))
    }

    /// A relative `keys` in a config file moved the same way: `serve` called the key file missing
    /// and advised `strata keys new`, which would have begun a key file without the clients' keys
    /// beside the one they use. The commands that read or make the key file name both readings.
    @Test func aConfigFilesRelativeKeyFileThatMovedIsNamedInBothReadings() throws {
        let place = try ChildProcess.temporaryDirectory("strata-config-keys")
        defer { try? FileManager.default.removeItem(at: place) }
        let working = place.appendingPathComponent("work")
        try FileManager.default.createDirectory(atPath: place.path + "/etc", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: working, withIntermediateDirectories: true)
        let data = working.path + "/data"
        _ = try strata(
            ["keys", "new", "svc", "--scope", "commands,history", "--keys", "keys.json", "--data", data], in: working,
            expecting: 0)
        let config = place.path + "/etc/strata.json"
        try writeConfig(["data": data, "keys": "keys.json"], to: config)
        let moved = place.path + "/etc/keys.json"

        let ports = try (0..<3).map { _ in try freeLoopbackPort() }
        let endpoints = zip(["--commands", "--events", "--history"], ports).flatMap { [$0, "tcp://127.0.0.1:\($1)"] }
        for command in [
            ["serve"] + endpoints, ["project", "audit"], ["keys", "new", "other", "--scope", "history"],
            ["keys", "revoke", "svc"],
        ] {
            let refused = try strata(command + ["--config", config], in: working, expecting: 2)
            #expect(refused.stderr.contains("sets keys to 'keys.json', which is \(moved)"), "\(refused.stderr)")
            #expect(refused.stderr.contains("from the working directory"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("create a key with"), "\(refused.stderr)")
        }
        // Nothing was made where the config file now points.
        #expect(!FileManager.default.fileExists(atPath: moved))

        // Where the working directory holds no key file, the config file's directory is the place.
        _ = try strata(["keys", "new", "other", "--scope", "history", "--config", config], in: place, expecting: 0)
        #expect(FileManager.default.fileExists(atPath: moved))
    }
}

