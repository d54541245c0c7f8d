import Domain
import EventStore
import Foundation
import StrataCore
import SubjectKeys

/// Every setting a Strata process reads, resolved in one place:
/// flags win over the environment, the environment over the config file, and the
/// config file over the defaults.
public struct Configuration: Sendable, Equatable {
    public var dataDirectory: String
    public var keysFile: String
    public var commandsEndpoint: String
    public var eventsEndpoint: String
    public var historyEndpoint: String
    /// The key id client commands (`send`, `demo`, `forget`) sign with.
    public var key: String?
    /// The config file that was read, if any.
    public var configFile: String?
    /// The domain limits the config file sets (`domain`); DOMAIN's defaults for the others.
    public var domain = DomainConfiguration()
    /// The data directory as the config file wrote it, when it came from there as a relative
    /// path: versions before paths in a config file were taken from its directory read this one
    /// from the working directory (`WorkingDirectoryHistory`).
    public var dataDirectoryAsWritten: String? = nil
    /// The key file as the config file wrote it, when it came from there as a relative path
    /// (`WorkingDirectoryKeyFile`).
    public var keysFileAsWritten: String? = nil

    public static let defaultDataDirectory = "./data"
    public static let defaultCommandsEndpoint = "tcp://127.0.0.1:7701"
    public static let defaultEventsEndpoint = "tcp://127.0.0.1:7702"
    public static let defaultHistoryEndpoint = "tcp://127.0.0.1:7703"

    public var eventStorePath: String { dataDirectory + "/events.db" }
    public var readModelsPath: String { dataDirectory + "/readmodels.db" }
    public var auditPath: String { dataDirectory + "/audit.db" }
    /// The key store that personal data is sealed with (docs/personal-data.md).
    public var subjectKeysPath: String { dataDirectory + "/" + SubjectKeyStore.fileName }
    /// What opens sealed personal data for the projections, `rebuild`, `query --as-of` and
    /// `report`: the key store, read-only, on first need.
    public var personalDataOpener: PersonalDataOpener { PersonalDataOpener(keyStorePath: subjectKeysPath) }
    /// The files the system keeps, each written by its own program only: the databases with the
    /// `-wal`, `-shm` and `-lock` beside them, the key file and the config file. A file a command
    /// makes on its own account (a rebuild) must be none of them. `DATA/strata.json` is one even
    /// while it does not exist: every command reads it once it does, so a report or a rebuild
    /// written there would stop every later command, `serve` included, at a config file that is
    /// not JSON.
    public var systemFiles: [String] {
        let configFiles = [implicitConfigFile] + (configFile.map { [$0] } ?? [])
        return [eventStorePath, readModelsPath, auditPath, subjectKeysPath].flatMap { database in
            ["", "-wal", "-shm", "-lock"].map { database + $0 }
        } + [keysFile, keysFile + ".lock"] + configFiles
    }

    /// The config file read when none is named, if it is there: `DATA/strata.json`.
    public var implicitConfigFile: String { Self.implicitConfigFile(in: dataDirectory) }

    static func implicitConfigFile(in dataDirectory: String) -> String { dataDirectory + "/strata.json" }

    /// The options every command that touches a data directory accepts.
    public static let options: [OptionSpec] = [
        OptionSpec("data", value: "DIR", help: "Data directory (env STRATA_DATA; default ./data)."),
        OptionSpec("config", value: "FILE", help: "JSON config file (env STRATA_CONFIG; default DATA/strata.json if present)."),
        OptionSpec("keys", value: "FILE", help: "Key file (env STRATA_KEYS; default DATA/keys.json)."),
    ]

    /// The endpoint options of the processes and clients that use the bus.
    public static let endpointOptions: [OptionSpec] = [
        OptionSpec("commands", value: "ENDPOINT", help: "Commands endpoint (env STRATA_COMMANDS; default \(defaultCommandsEndpoint))."),
        OptionSpec("events", value: "ENDPOINT", help: "Events endpoint (env STRATA_EVENTS; default \(defaultEventsEndpoint))."),
        OptionSpec("history", value: "ENDPOINT", help: "History endpoint (env STRATA_HISTORY; default \(defaultHistoryEndpoint))."),
        OptionSpec("key", value: "ID", help: "Key id client commands sign with (env STRATA_KEY)."),
    ]

    /// The settings a config file may hold: strings, and the domain limits under `domain`.
    static let fileKeys: Set<String> = ["data", "keys", "commands", "events", "history", "key", domainFileKey]

    /// What a config file holds: its string settings by key, and the domain limits.
    struct ConfigFile {
        var settings: [String: String] = [:]
        /// The relative paths among the settings as written, before `relative(_:to:)`.
        var relativePaths: [String: String] = [:]
        var domain = DomainConfiguration()

        subscript(key: String) -> String? { settings[key] }
    }

    public static func resolve(_ arguments: ParsedArguments, environment: [String: String]) throws(UsageError) -> Configuration {
        func setting(_ flag: String, _ variable: String) -> String? {
            if let value = arguments.value(flag) { return value }
            if let value = environment[variable], !value.isEmpty { return value }
            return nil
        }

        // The data directory comes first: the default config file lives in it.
        let explicitConfig = setting("config", "STRATA_CONFIG")
        var file = ConfigFile()
        if let explicitConfig {
            file = try readConfigFile(explicitConfig)
        }
        let dataFlag = setting("data", "STRATA_DATA")
        let dataDirectory = dataFlag ?? file["data"] ?? defaultDataDirectory
        let dataAsWritten = dataFlag == nil ? file.relativePaths["data"] : nil
        let keysFlag = setting("keys", "STRATA_KEYS")
        var configFile = explicitConfig
        if explicitConfig == nil {
            let implicit = implicitConfigFile(in: dataDirectory)
            if FileContents.isPresent(implicit) {
                file = try readConfigFile(implicit)
                if let moved = file["data"], !sameDirectory(moved, dataDirectory) {
                    throw UsageError(
                        "\(implicit) sets data to '\(moved)', but a config file cannot move the data directory it lives in")
                }
                configFile = implicit
            }
        }
        return Configuration(
            dataDirectory: dataDirectory,
            keysFile: keysFlag ?? file["keys"] ?? dataDirectory + "/keys.json",
            commandsEndpoint: setting("commands", "STRATA_COMMANDS") ?? file["commands"] ?? defaultCommandsEndpoint,
            eventsEndpoint: setting("events", "STRATA_EVENTS") ?? file["events"] ?? defaultEventsEndpoint,
            historyEndpoint: setting("history", "STRATA_HISTORY") ?? file["history"] ?? defaultHistoryEndpoint,
            key: setting("key", "STRATA_KEY") ?? file["key"],
            configFile: configFile,
            domain: file.domain,
            dataDirectoryAsWritten: dataAsWritten,
            keysFileAsWritten: keysFlag == nil ? file.relativePaths["keys"] : nil)
    }

    static func readConfigFile(_ path: String) throws(UsageError) -> ConfigFile {
        let bytes: [UInt8]
        switch FileContents.read(path) {
        case .success(let read): bytes = read
        case .failure(let error): throw UsageError("cannot read the config file \(path): \(error)")
        }
        // The offset an error names stays the file's.
        let mark = ByteOrderMark.length(at: bytes)
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes.dropFirst(mark))
        } catch {
            throw UsageError(
                "config file \(path) is not valid JSON: \(error.reason.rawValue) at byte \(error.offset + mark)")
        }
        guard let members = json.objectValue else { throw UsageError("config file \(path) must hold a JSON object") }
        var file = ConfigFile()
        for (key, value) in members {
            guard fileKeys.contains(key) else {
                throw UsageError(
                    "config file \(path): unknown setting '\(key)' (known: \(fileKeys.sorted().joined(separator: ", ")))")
            }
            if key == domainFileKey {
                file.domain = try readDomainLimits(value, in: path)
                continue
            }
            guard let text = value.stringValue, !text.isEmpty else {
                throw UsageError("config file \(path): '\(key)' must be a non-empty string")
            }
            // JSON may write one (`\u0000`), but no path or endpoint holds one: the system would
            // take the value as ending there, and open or connect to another than the one written.
            guard !text.unicodeScalars.contains("\0") else {
                throw UsageError("config file \(path): '\(key)' must not hold a NUL character (\\u0000)")
            }
            file.settings[key] = pathKeys.contains(key) ? relative(text, to: path) : text
            if pathKeys.contains(key), !text.hasPrefix("/") { file.relativePaths[key] = text }
        }
        return file
    }

    /// The settings of a config file that are paths.
    static let pathKeys: Set<String> = ["data", "keys"]

    /// A path the config file at `file` names, as the process must open it: a relative one is
    /// taken from the config file's own directory, so that the file means the same whatever
    /// directory a command runs in (`{"keys": "keys.json"}` in DATA/strata.json is DATA/keys.json).
    static func relative(_ path: String, to file: String) -> String {
        guard !path.hasPrefix("/"), let slash = file.lastIndex(of: "/") else { return path }
        return String(file[...slash]) + path
    }

    /// Whether two paths name one directory: the same file to the kernel when both are there, so
    /// that a data directory reached through a symbolic link is the one its config file names by
    /// its real path (and the other way round); else the same path once `.` and `..` are resolved.
    static func sameDirectory(_ a: String, _ b: String) -> Bool {
        if let one = FileIdentity(path: a), let other = FileIdentity(path: b) { return one == other }
        return standardized(a) == standardized(b)
    }

    private static func standardized(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }
}
