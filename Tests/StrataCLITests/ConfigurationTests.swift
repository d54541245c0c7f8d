import Foundation
import StrataCore
import StrataTesting
import Testing

@testable import StrataCLI

/// Parsed arguments holding exactly these option values.
func options(_ values: [String: String]) -> ParsedArguments {
    var parsed = ParsedArguments()
    parsed.values = values
    return parsed
}

/// Writes a JSON object of strings as a config file.
func writeConfig(_ settings: [String: String], to path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let json = CanonicalJSON.bytes(.object(settings.mapValues { .string($0) }))
    try #require(FileManager.default.createFile(atPath: path, contents: Data(json)), sourceLocation: sourceLocation)
}

/// Writes raw text to a file.
func writeText(_ text: String, to path: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    try #require(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)), sourceLocation: sourceLocation)
}

/// Expects resolving to be a usage error whose message contains `fragment`.
func expectConfigurationError(
    _ values: [String: String], environment: [String: String] = [:], containing fragment: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let configuration = try Configuration.resolve(options(values), environment: environment)
        Issue.record("expected a usage error, resolved \(configuration)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.message.contains(fragment), "message was: \(error.message)", sourceLocation: sourceLocation)
    }
}

/// One setting of CONTRACT.md's configuration table.
struct Setting: Sendable, CustomTestStringConvertible {
    let flag: String
    let variable: String
    let read: @Sendable (Configuration) -> String?
    /// Its default, given the data directory.
    let defaultValue: @Sendable (String) -> String?

    var testDescription: String { "--\(flag) / \(variable)" }

    static let all: [Setting] = [
        Setting(flag: "data", variable: "STRATA_DATA", read: { $0.dataDirectory }, defaultValue: { $0 }),
        Setting(flag: "keys", variable: "STRATA_KEYS", read: { $0.keysFile }, defaultValue: { $0 + "/keys.json" }),
        Setting(
            flag: "commands", variable: "STRATA_COMMANDS", read: { $0.commandsEndpoint },
            defaultValue: { _ in "tcp://127.0.0.1:7701" }),
        Setting(
            flag: "events", variable: "STRATA_EVENTS", read: { $0.eventsEndpoint }, defaultValue: { _ in "tcp://127.0.0.1:7702" }),
        Setting(
            flag: "history", variable: "STRATA_HISTORY", read: { $0.historyEndpoint },
            defaultValue: { _ in "tcp://127.0.0.1:7703" }),
        Setting(flag: "key", variable: "STRATA_KEY", read: { $0.key }, defaultValue: { _ in nil }),
    ]
}

@Suite("Configuration")
struct ConfigurationTests {
    /// flag > environment > config file > default, for each setting.
    @Test(arguments: Setting.all)
    func precedence(_ setting: Setting) throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        let baseData = dir.path + "/data"
        let config = dir.path + "/config.json"
        // Distinct values per source; for the paths (`data`, `keys`) absolute ones, since a relative
        // path in the config file is taken from the file's directory.
        let path = setting.flag == "data" || setting.flag == "keys"
        let fileValue = path ? dir.path + "/from-file" : "file-\(setting.flag)"
        let envValue = path ? dir.path + "/from-env" : "env-\(setting.flag)"
        let flagValue = path ? dir.path + "/from-flag" : "flag-\(setting.flag)"
        try writeConfig([setting.flag: fileValue], to: config)

        func resolve(file: Bool, env: Bool, flag: Bool) throws -> String? {
            var values: [String: String] = [:]
            // Pin the data directory for the other settings, so ./data is never consulted.
            if setting.flag != "data" { values["data"] = baseData }
            if file { values["config"] = config }
            if flag { values[setting.flag] = flagValue }
            let environment = env ? [setting.variable: envValue] : [:]
            return setting.read(try Configuration.resolve(options(values), environment: environment))
        }

        if setting.flag != "data" {
            #expect(try resolve(file: false, env: false, flag: false) == setting.defaultValue(baseData))
        }
        #expect(try resolve(file: true, env: false, flag: false) == fileValue)
        #expect(try resolve(file: false, env: true, flag: false) == envValue)
        #expect(try resolve(file: true, env: true, flag: false) == envValue)
        #expect(try resolve(file: false, env: false, flag: true) == flagValue)
        #expect(try resolve(file: true, env: false, flag: true) == flagValue)
        #expect(try resolve(file: true, env: true, flag: true) == flagValue)
    }

    @Test(.disabled(if: FileManager.default.fileExists(atPath: "./data/strata.json"), "a ./data/strata.json is present"))
    func defaults() throws {
        let configuration = try Configuration.resolve(ParsedArguments(), environment: [:])
        #expect(configuration.dataDirectory == "./data")
        #expect(configuration.keysFile == "./data/keys.json")
        #expect(configuration.commandsEndpoint == "tcp://127.0.0.1:7701")
        #expect(configuration.eventsEndpoint == "tcp://127.0.0.1:7702")
        #expect(configuration.historyEndpoint == "tcp://127.0.0.1:7703")
        #expect(configuration.key == nil)
        #expect(configuration.configFile == nil)
        #expect(configuration.eventStorePath == "./data/events.db")
        #expect(configuration.readModelsPath == "./data/readmodels.db")
        #expect(configuration.auditPath == "./data/audit.db")
    }

    @Test func defaultKeyFileFollowsTheDataDirectory() throws {
        #expect(try Configuration.resolve(options(["data": "/srv/strata"]), environment: [:]).keysFile == "/srv/strata/keys.json")
        #expect(try Configuration.resolve(ParsedArguments(), environment: ["STRATA_DATA": "/srv/s2"]).keysFile == "/srv/s2/keys.json")
        let configuration = try Configuration.resolve(options(["data": "/srv/strata"]), environment: [:])
        #expect(configuration.eventStorePath == "/srv/strata/events.db")
    }

    @Test func implicitConfigInTheDataDirectoryIsRead() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeConfig(
            ["commands": "tcp://10.0.0.1:1", "keys": "/etc/strata/keys.json", "key": "svc", "history": "ipc:///tmp/h"],
            to: dir.path + "/strata.json")

        for (values, environment) in [(["data": dir.path], [:]), ([:], ["STRATA_DATA": dir.path])] as [([String: String], [String: String])] {
            let configuration = try Configuration.resolve(options(values), environment: environment)
            #expect(configuration.configFile == dir.path + "/strata.json")
            #expect(configuration.commandsEndpoint == "tcp://10.0.0.1:1")
            #expect(configuration.keysFile == "/etc/strata/keys.json")
            #expect(configuration.key == "svc")
            #expect(configuration.historyEndpoint == "ipc:///tmp/h")
            #expect(configuration.eventsEndpoint == "tcp://127.0.0.1:7702")
        }
        // The environment still wins over it.
        let configuration = try Configuration.resolve(options(["data": dir.path]), environment: ["STRATA_COMMANDS": "tcp://env:2"])
        #expect(configuration.commandsEndpoint == "tcp://env:2")
    }

    @Test func implicitConfigIsLookedForInTheDirectoryThatWins() throws {
        let flagDir = try ChildProcess.temporaryDirectory("strata-config")
        let envDir = try ChildProcess.temporaryDirectory("strata-config")
        defer {
            try? FileManager.default.removeItem(at: flagDir)
            try? FileManager.default.removeItem(at: envDir)
        }
        try writeConfig(["commands": "tcp://flag-dir:1"], to: flagDir.path + "/strata.json")
        try writeConfig(["commands": "tcp://env-dir:1"], to: envDir.path + "/strata.json")
        let configuration = try Configuration.resolve(options(["data": flagDir.path]), environment: ["STRATA_DATA": envDir.path])
        #expect(configuration.dataDirectory == flagDir.path)
        #expect(configuration.commandsEndpoint == "tcp://flag-dir:1")
    }

    @Test func implicitConfigCannotMoveTheDataDirectory() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeConfig(["data": dir.path + "/elsewhere"], to: dir.path + "/strata.json")
        expectConfigurationError(["data": dir.path], containing: "cannot move the data directory")
        expectConfigurationError([:], environment: ["STRATA_DATA": dir.path], containing: "cannot move the data directory")
    }

    @Test func implicitConfigMayNameItsOwnDirectory() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        for same in [dir.path, dir.path + "/", dir.path + "/.", dir.path + "/sub/.."] {
            try writeConfig(["data": same, "events": "tcp://e:1"], to: dir.path + "/strata.json")
            let configuration = try Configuration.resolve(options(["data": dir.path]), environment: [:])
            #expect(configuration.dataDirectory == dir.path)
            #expect(configuration.eventsEndpoint == "tcp://e:1", "data written as \(same)")
        }
    }

    /// A data directory reached through a symbolic link is the directory its config file names by
    /// its real path, and the other way round: both were refused as moving the data directory.
    @Test func implicitConfigMayNameItsOwnDirectoryThroughALink() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        let real = dir.path + "/real"
        let link = dir.path + "/link"
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        for (written, given) in [(real, link), (link, real)] {
            try writeConfig(["data": written, "events": "tcp://e:1"], to: real + "/strata.json")
            let configuration = try Configuration.resolve(options(["data": given]), environment: [:])
            #expect(configuration.dataDirectory == given)
            #expect(configuration.eventsEndpoint == "tcp://e:1", "data written as \(written), given as \(given)")
        }
        // Another directory is still refused, there or not.
        try FileManager.default.createDirectory(atPath: dir.path + "/other", withIntermediateDirectories: true)
        for other in [dir.path + "/other", dir.path + "/absent"] {
            try writeConfig(["data": other], to: real + "/strata.json")
            expectConfigurationError(["data": link], containing: "cannot move the data directory")
        }
    }

    @Test func explicitConfigMaySetTheDataDirectory() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.path + "/elsewhere.json"
        try writeConfig(["data": dir.path + "/store", "events": "tcp://e:9"], to: config)
        for (values, environment) in [(["config": config], [:]), ([:], ["STRATA_CONFIG": config])] as [([String: String], [String: String])] {
            let configuration = try Configuration.resolve(options(values), environment: environment)
            #expect(configuration.dataDirectory == dir.path + "/store")
            #expect(configuration.keysFile == dir.path + "/store/keys.json")
            #expect(configuration.eventsEndpoint == "tcp://e:9")
            #expect(configuration.configFile == config)
        }
    }

    /// A relative path in a config file is taken from the file's directory, not from wherever the
    /// command runs: the same file must mean the same files to `strata up` started in one directory
    /// and `strata status` run from another. Endpoints are taken as written.
    @Test func relativePathsInAConfigFileAreTakenFromItsDirectory() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(atPath: dir.path + "/etc", withIntermediateDirectories: true)
        let config = dir.path + "/etc/strata.json"
        try writeConfig(["data": "../store", "keys": "keys.json", "commands": "ipc://commands"], to: config)
        let explicit = try Configuration.resolve(options(["config": config]), environment: [:])
        #expect(explicit.dataDirectory == dir.path + "/etc/../store")
        #expect(explicit.keysFile == dir.path + "/etc/keys.json")
        #expect(explicit.commandsEndpoint == "ipc://commands")
        // The default one, in the data directory: "." is that directory, so it does not move it.
        try writeConfig(["data": ".", "keys": "secrets/keys.json"], to: dir.path + "/strata.json")
        let implicit = try Configuration.resolve(options(["data": dir.path]), environment: [:])
        #expect(implicit.dataDirectory == dir.path)
        #expect(implicit.keysFile == dir.path + "/secrets/keys.json")
        // A flag or the environment is still the working directory's, as any path on a command line.
        let flagged = try Configuration.resolve(options(["config": config, "keys": "k.json"]), environment: [:])
        #expect(flagged.keysFile == "k.json")
        // Absolute paths are kept as written.
        try writeConfig(["keys": "/srv/keys.json"], to: config)
        #expect(try Configuration.resolve(options(["config": config]), environment: [:]).keysFile == "/srv/keys.json")
    }

    @Test func explicitConfigReplacesTheImplicitOne() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        // The implicit file is broken: it must not even be read.
        try writeText("{ not json", to: dir.path + "/strata.json")
        let config = dir.path + "/explicit.json"
        try writeConfig(["commands": "tcp://explicit:1"], to: config)
        let configuration = try Configuration.resolve(options(["data": dir.path, "config": config]), environment: [:])
        #expect(configuration.commandsEndpoint == "tcp://explicit:1")
        #expect(configuration.configFile == config)
        // --config wins over STRATA_CONFIG.
        let other = dir.path + "/other.json"
        try writeConfig(["commands": "tcp://other:1"], to: other)
        let both = try Configuration.resolve(options(["data": dir.path, "config": config]), environment: ["STRATA_CONFIG": other])
        #expect(both.commandsEndpoint == "tcp://explicit:1")
    }

    @Test(arguments: ["port", "Data", "dataDirectory", "config", ""])
    func unknownConfigKeysAreRefused(_ key: String) throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeConfig(["commands": "tcp://x:1", key: "value"], to: dir.path + "/c.json")
        expectConfigurationError(["config": dir.path + "/c.json"], containing: "unknown setting '\(key)'")
        // The implicit file too.
        try writeConfig([key: "value"], to: dir.path + "/strata.json")
        expectConfigurationError(["data": dir.path], containing: "unknown setting '\(key)'")
    }

    @Test(arguments: [
        ("{", "is not valid JSON"), ("", "is not valid JSON"), (#"{"commands":"a","commands":"b"}"#, "is not valid JSON"),
        ("{\"commands\": 1.5}", "is not valid JSON"), ("[]", "must hold a JSON object"), (#""data""#, "must hold a JSON object"),
        (#"{"commands": 7701}"#, "'commands' must be a non-empty string"), (#"{"key": ""}"#, "'key' must be a non-empty string"),
        (#"{"data": null}"#, "'data' must be a non-empty string"), (#"{"keys": ["a"]}"#, "'keys' must be a non-empty string"),
        // The system would read the value only up to it: another directory, file or address than written.
        (#"{"data": "d\u0000junk"}"#, #"'data' must not hold a NUL character (\u0000)"#),
        (#"{"commands": "tcp://x:1\u0000"}"#, #"'commands' must not hold a NUL character (\u0000)"#),
    ])
    func invalidConfigFilesAreRefused(_ text: String, _ fragment: String) throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeText(text, to: dir.path + "/c.json")
        expectConfigurationError(["config": dir.path + "/c.json"], containing: fragment)
        try writeText(text, to: dir.path + "/strata.json")
        expectConfigurationError(["data": dir.path], containing: fragment)
    }

    /// A UTF-8 byte order mark, as Windows' editors write one, is read past, in the default file and
    /// one named; an error after it names the byte of the file.
    @Test func aByteOrderMarkIsReadPast() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        let mark = "\u{FEFF}"
        try writeText(mark + #"{"commands": "tcp://bom:1"}"#, to: dir.path + "/strata.json")
        let implicit = try Configuration.resolve(options(["data": dir.path]), environment: [:])
        #expect(implicit.commandsEndpoint == "tcp://bom:1")
        try writeText(mark + #"{"commands": "tcp://named:1"}"#, to: dir.path + "/c.json")
        let named = try Configuration.resolve(options(["config": dir.path + "/c.json"]), environment: [:])
        #expect(named.commandsEndpoint == "tcp://named:1")
        try writeText(mark + "{,}", to: dir.path + "/c.json")
        expectConfigurationError(
            ["config": dir.path + "/c.json"], containing: "is not valid JSON: UNEXPECTED_CHARACTER at byte 4")
    }

    @Test func missingExplicitConfigIsRefused() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        expectConfigurationError(["config": dir.path + "/absent.json"], containing: "cannot read the config file")
        expectConfigurationError([:], environment: ["STRATA_CONFIG": dir.path + "/absent.json"], containing: "cannot read the config file")
    }

    /// A config file that cannot be read says why, the system's words for it: whether it is
    /// missing, a directory or forbidden is what the user has to fix, and each read alike.
    @Test func anUnreadableConfigFileIsNamedWithItsCause() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        expectConfigurationError(
            ["config": dir.path + "/absent.json"],
            containing: "cannot read the config file \(dir.path)/absent.json: No such file or directory")
        expectConfigurationError(
            ["config": dir.path], containing: "cannot read the config file \(dir.path): Is a directory")
        // The default one too: a directory, or a link to nothing, where DATA/strata.json is looked
        // for is a mistake to report, where it was passed over as no config file at all.
        try FileManager.default.createDirectory(atPath: dir.path + "/a/strata.json", withIntermediateDirectories: true)
        expectConfigurationError(
            ["data": dir.path + "/a"],
            containing: "cannot read the config file \(dir.path)/a/strata.json: Is a directory")
        try FileManager.default.createDirectory(atPath: dir.path + "/b", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: dir.path + "/b/strata.json", withDestinationPath: "gone.json")
        expectConfigurationError(
            ["data": dir.path + "/b"],
            containing: "cannot read the config file \(dir.path)/b/strata.json: No such file or directory")
    }

    /// A config file is read up to 16 MiB: a path named by mistake (`--config /dev/zero`) was read
    /// until memory ran out. Valid JSON past the bound (an object and 17 MiB of spaces) is refused
    /// by its size, where it was read whole and accepted.
    @Test func aConfigFileLargerThanAnyIsRefusedBeforeItIsReadWhole() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.path + "/strata.json"
        try (Array("{}".utf8) + [UInt8](repeating: 0x20, count: 17 << 20)).withUnsafeBytes {
            try Data($0).write(to: URL(fileURLWithPath: path))
        }
        expectConfigurationError(
            ["config": path],
            containing: "cannot read the config file \(path): it holds more than 16 MiB, more than such a file "
                + "ever does")
    }

    /// The key file likewise (exit 2), while a missing one still says how to make one.
    @Test func anUnreadableKeyFileIsNamedWithItsCause() throws {
        try withTemporaryDirectory { dir in
            try FileManager.default.createDirectory(atPath: dir.path + "/keys.json", withIntermediateDirectories: true)
            let result = try strata(["send", "--data", dir.path, "--commands", "tcp://127.0.0.1:1"], expecting: 2)
            #expect(result.stderr == "strata send: cannot read the key file \(dir.path)/keys.json: Is a directory\n")
        }
    }

    @Test func emptyEnvironmentVariablesAreIgnored() throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeConfig(["commands": "tcp://file:1", "key": "file-key"], to: dir.path + "/strata.json")
        let empty = [
            "STRATA_CONFIG": "", "STRATA_KEYS": "", "STRATA_COMMANDS": "", "STRATA_EVENTS": "", "STRATA_HISTORY": "",
            "STRATA_KEY": "",
        ]
        let configuration = try Configuration.resolve(options(["data": dir.path]), environment: empty)
        // STRATA_CONFIG="" does not stop the implicit file from being read.
        #expect(configuration.configFile == dir.path + "/strata.json")
        #expect(configuration.commandsEndpoint == "tcp://file:1")
        #expect(configuration.key == "file-key")
        #expect(configuration.keysFile == dir.path + "/keys.json")
        #expect(configuration.eventsEndpoint == "tcp://127.0.0.1:7702")
        #expect(configuration.historyEndpoint == "tcp://127.0.0.1:7703")
        // STRATA_DATA="" falls through to the config file's data.
        let config = dir.path + "/explicit.json"
        try writeConfig(["data": dir.path + "/d"], to: config)
        let viaFile = try Configuration.resolve(options(["config": config]), environment: ["STRATA_DATA": ""])
        #expect(viaFile.dataDirectory == dir.path + "/d")
    }

    @Test func unrelatedEnvironmentIsIgnored() throws {
        let configuration = try Configuration.resolve(
            options(["data": "/srv/s"]), environment: ["STRATA_PORT": "1", "DATA": "/x", "strata_commands": "tcp://lower:1"])
        #expect(configuration.commandsEndpoint == "tcp://127.0.0.1:7701")
        #expect(configuration.dataDirectory == "/srv/s")
    }

    /// The option names on the command line are the contract's flags.
    @Test func flagsThroughTheArgumentParser() throws {
        let spec = CommandSpec(["x"], summary: "s", options: Configuration.options + Configuration.endpointOptions)
        #expect(Set(spec.options.map(\.name)) == ["data", "config", "keys", "commands", "events", "history", "key"])
        let result = try ArgumentParser.parse(
            [
                "--data", "/d", "--keys=/k.json", "--commands", "tcp://c:1", "--events", "tcp://e:1", "--history", "tcp://h:1",
                "--key", "svc",
            ], spec: spec)
        guard case .parsed(let parsed) = result else {
            Issue.record("expected a parse")
            return
        }
        let configuration = try Configuration.resolve(parsed, environment: ["STRATA_KEY": "env-key", "STRATA_DATA": "/env"])
        #expect(
            configuration
                == Configuration(
                    dataDirectory: "/d", keysFile: "/k.json", commandsEndpoint: "tcp://c:1", eventsEndpoint: "tcp://e:1",
                    historyEndpoint: "tcp://h:1", key: "svc", configFile: nil))
    }
}
