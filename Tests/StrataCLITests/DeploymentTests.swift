import Foundation
import StrataCore
import StrataSQLite
import StrataTesting
import Testing

import StrataCLI

// The deployment files, checked without a Docker engine (none runs where the tests run):
// docker-compose.yml as Compose itself reads it, against what `strata up` runs and what the
// real binary answers; the Dockerfile's package lists against scripts/bootstrap and against
// the libraries the binary links.

/// The repository's top level, where docker-compose.yml, the Dockerfile and scripts/ are.
private let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Debian's `docker-compose` (1.29, which `scripts/bootstrap --test` installs): it reads and
/// checks a compose file with no engine running.
enum DockerCompose {
    static let executable: URL? = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        .split(separator: ":")
        .map { "\($0)/docker-compose" }
        .first { FileManager.default.isExecutableFile(atPath: $0) }
        .map { URL(fileURLWithPath: $0) }

    /// On CI a missing docker-compose is a failure, not a skip: the check must run there.
    static let isRequired = ProcessInfo.processInfo.environment["CI"] == "true"

    /// `docker-compose config`: the file as Compose resolves it. The test fails on any
    /// complaint, warnings on standard error included.
    static func config(_ file: URL, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        let compose = try #require(
            executable, "docker-compose is not installed: scripts/bootstrap --test installs it",
            sourceLocation: sourceLocation)
        let result = try ChildProcess.run(compose, ["-f", file.path, "config"])
        try #require(result.exitCode == 0, "docker-compose config: \(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stderr.isEmpty, "docker-compose config: \(result.stderr)", sourceLocation: sourceLocation)
        return try yamlToJSON(result.stdout, compose: compose, sourceLocation: sourceLocation)
    }

    /// YAML to JSON with PyYAML, which docker-compose is built on, run by the Python its
    /// script names: the Python that has it.
    private static func yamlToJSON(_ yaml: String, compose: URL, sourceLocation: SourceLocation) throws -> JSONValue {
        let script = try String(contentsOf: compose, encoding: .utf8)
        let firstLine = script.split(separator: "\n", maxSplits: 1).first ?? ""
        try #require(firstLine.hasPrefix("#!"), "\(compose.path) is not a script", sourceLocation: sourceLocation)
        let interpreter = firstLine.dropFirst(2).split(separator: " ").map(String.init)
        let program = "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"
        let result = try ChildProcess.run(
            URL(fileURLWithPath: interpreter[0]), Array(interpreter.dropFirst()) + ["-c", program], stdin: yaml)
        try #require(result.exitCode == 0, "YAML to JSON: \(result.stderr)", sourceLocation: sourceLocation)
        return try JSONParser.parse(result.stdout)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test where docker-compose is installed, and always on CI.
    static var dockerCompose: Self {
        .enabled(
            if: DockerCompose.executable != nil || DockerCompose.isRequired,
            "docker-compose is not installed (scripts/bootstrap --test installs it)")
    }
}

/// A Dockerfile read the way Docker reads it: continuation lines joined, comments dropped,
/// split into stages at each FROM.
struct Dockerfile {
    struct Stage {
        /// The FROM line's image (`swift:6.3.1-bookworm`).
        let image: String
        /// Every instruction after FROM, each on one line.
        let instructions: [String]

        /// The packages its RUN instructions give `apt-get install`.
        var aptPackages: [String] {
            instructions.filter { $0.hasPrefix("RUN ") }
                .flatMap { $0.dropFirst(4).components(separatedBy: "&&") }
                .flatMap { command -> [String] in
                    let words = command.split(whereSeparator: \.isWhitespace).map(String.init)
                    guard let install = words.firstIndex(of: "install"), install > 0, words[install - 1] == "apt-get"
                    else { return [] }
                    return words[(install + 1)...].filter { !$0.hasPrefix("-") }
                }
        }

        /// The value an ENV instruction gives `name`.
        func environment(_ name: String) -> String? {
            instructions.filter { $0.hasPrefix("ENV ") }
                .flatMap { $0.dropFirst(4).split(whereSeparator: \.isWhitespace) }
                .first { $0.hasPrefix("\(name)=") }
                .map { String($0.dropFirst(name.count + 1)) }
        }
    }

    let stages: [Stage]

    init(_ text: String) {
        var instructions: [String] = []
        var pending = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") || (trimmed.isEmpty && pending.isEmpty) { continue }
            if trimmed.hasSuffix("\\") {
                pending += trimmed.dropLast() + " "
                continue
            }
            instructions.append(pending + trimmed)
            pending = ""
        }
        var stages: [Stage] = []
        for instruction in instructions {
            if instruction.hasPrefix("FROM ") {
                let image = String(instruction.split(separator: " ")[1])
                stages.append(Stage(image: image, instructions: []))
            } else if let last = stages.popLast() {
                stages.append(Stage(image: last.image, instructions: last.instructions + [instruction]))
            }
        }
        self.stages = stages
    }

    static func read() throws -> Dockerfile {
        Dockerfile(try String(contentsOf: repository.appendingPathComponent("Dockerfile"), encoding: .utf8))
    }
}

/// The Debian release this machine runs (`bookworm`), which the package names below are of.
private func debianCodename() throws -> String {
    let release = try String(contentsOfFile: "/etc/os-release", encoding: .utf8)
    let line = try #require(release.split(separator: "\n").first { $0.hasPrefix("VERSION_CODENAME=") })
    return String(line.dropFirst("VERSION_CODENAME=".count))
}

/// Runs a tool from the system (`readelf`, `ldd`, `dpkg-query`) and returns its output.
private func system(
    _ tool: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
) throws -> String {
    let result = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), [tool] + arguments)
    try #require(result.exitCode == 0, "\(tool) \(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    return result.stdout
}

@Suite struct DeploymentTests {
    /// The three processes `up` runs, by name, each with its arguments after `strata`.
    private func upServices(_ options: [String] = [], in directory: URL) throws -> [String: [String]] {
        let result = try strata(["up", "--print-services"] + options, in: directory, expecting: 0)
        var services: [String: [String]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let json = try jsonLine(line)
            let name = try #require(json["name"]?.stringValue)
            services[name] = try #require(json["arguments"]?.arrayValue).compactMap(\.stringValue)
        }
        return services
    }

    @Test func upPrintsTheProcessesItRunsWithTheSettingsEachTakes() throws {
        try withTemporaryDirectory { dir in
            // Nothing is started and no key file is read: there is none here.
            let bare = try strata(["up", "--print-services"], in: dir, expecting: 0)
            #expect(
                bare.stdout == """
                    {"arguments":["serve"],"essential":true,"name":"serve"}
                    {"arguments":["project","readmodels"],"essential":false,"name":"readmodels"}
                    {"arguments":["project","audit"],"essential":false,"name":"audit"}

                    """)
            #expect(bare.stderr.isEmpty, "\(bare.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).isEmpty)

            // serve takes no signing key, the projectors no commands endpoint nor checkpoint key.
            // serve alone takes its own settings too.
            let serveSettings = [
                "--publisher-hwm", "5000", "--checkpoint-interval", "30", "--max-store-bytes", "1048576",
            ]
            let services = try upServices(
                ["--data", "/srv/strata", "--key", "svc-p", "--commands", "tcp://*:9701", "--events", "tcp://*:9702",
                 "--checkpoint-key", "/srv/checkpoint.key"] + serveSettings,
                in: dir)
            let shared = ["--data", "/srv/strata", "--events", "tcp://*:9702"]
            #expect(
                services == [
                    "serve": ["serve"] + shared
                        + ["--commands", "tcp://*:9701", "--checkpoint-key", "/srv/checkpoint.key"] + serveSettings,
                    "readmodels": ["project", "readmodels"] + shared + ["--key", "svc-p"],
                    "audit": ["project", "audit"] + shared + ["--key", "svc-p"],
                ])
        }
    }

    @Test(.dockerCompose)
    func composeIsValidAndRunsWhatUpRuns() throws {
        let config = try DockerCompose.config(repository.appendingPathComponent("docker-compose.yml"))
        let services = try #require(config["services"]?.objectValue)
        #expect(services.keys.sorted() == ["audit", "commands", "readmodels"])
        let commands = try services.mapValues { service in
            try #require(service["command"]?.arrayValue, "a service without a command").compactMap(\.stringValue)
        }
        try withTemporaryDirectory { dir in
            let up = try upServices(in: dir)
            // The same processes, each once: compose runs what `up` runs, no more and no fewer.
            #expect(commands.values.sorted { $0.lexicographicallyPrecedes($1) }
                == up.values.sorted { $0.lexicographicallyPrecedes($1) })
            #expect(commands["commands"] == up["serve"])
            #expect(commands["readmodels"] == up["readmodels"])
            #expect(commands["audit"] == up["audit"])
        }
    }

    @Test(.dockerCompose)
    func composeWiresTheServicesTogether() throws {
        let config = try DockerCompose.config(repository.appendingPathComponent("docker-compose.yml"))
        let services = try #require(config["services"]?.objectValue)
        let image = try #require(Dockerfile.read().stages.last)
        let dataDirectory = try #require(image.environment("STRATA_DATA"))
        #expect(dataDirectory == "/var/lib/strata")
        #expect(config["volumes"]?["data"] != nil)
        #expect(config["secrets"]?["strata_keys"]?["file"]?.stringValue == repository.path + "/secrets/keys.json")

        let server = "commands"
        let ports = ["STRATA_COMMANDS": "7701", "STRATA_EVENTS": "7702", "STRATA_HISTORY": "7703"]
        for (name, service) in services {
            // One named volume, at the data directory the image sets; one key file, as a secret.
            #expect(service["volumes"]?.arrayValue == [.string("data:\(dataDirectory):rw")], "\(name)")
            #expect(service["secrets"]?.arrayValue == [["source": "strata_keys"]], "\(name)")
            let environment = try #require(service["environment"]?.objectValue, "\(name)")
            #expect(environment["STRATA_KEYS"] == "/run/secrets/strata_keys", "\(name)")
            #expect(service["restart"] == "unless-stopped", "\(name)")
            // serve binds every interface of its container; the others connect to it by name,
            // on the ports it binds.
            let host = name == server ? "0.0.0.0" : server
            for (variable, port) in ports {
                #expect(environment[variable]?.stringValue == "tcp://\(host):\(port)", "\(name) \(variable)")
            }
            if name != server {
                #expect(service["depends_on"]?[server]?["condition"] == "service_healthy", "\(name)")
            }
        }
        // The host's own clients reach serve on loopback, at the default endpoints.
        #expect(
            services[server]?["ports"]?.arrayValue
                == ["7701", "7702", "7703"].map { .string("127.0.0.1:\($0):\($0)/tcp") })
        #expect(
            Configuration.defaultCommandsEndpoint == "tcp://127.0.0.1:7701"
                && Configuration.defaultEventsEndpoint == "tcp://127.0.0.1:7702"
                && Configuration.defaultHistoryEndpoint == "tcp://127.0.0.1:7703")
    }

    /// Each service's health check, run through the real binary with the data directory the
    /// image sets: the store is judged by `commands`, each projection by its own projector.
    @Test(.dockerCompose)
    func eachHealthCheckJudgesItsOwnProcess() throws {
        let config = try DockerCompose.config(repository.appendingPathComponent("docker-compose.yml"))
        let services = try #require(config["services"]?.objectValue)
        let checks = try services.mapValues { service in
            let test = try #require(service["healthcheck"]?["test"]?.arrayValue).compactMap(\.stringValue)
            try #require(test.count > 2 && test[0] == "CMD" && test[1] == "strata", "\(test)")
            return Array(test.dropFirst(2))
        }
        #expect(
            checks == [
                "commands": ["status", "--only", "events"], "readmodels": ["status", "--only", "readmodels"],
                "audit": ["status", "--only", "audit"],
            ])
        try withTemporaryDirectory { dir in
            let data = dir.appendingPathComponent("data").path
            func exitCodes() throws -> [String: Int32] {
                try checks.mapValues { try ChildProcess.strata($0, environment: ["STRATA_DATA": data]).exitCode }
            }
            // Before the first start: no store, an environment problem for every one.
            #expect(try exitCodes() == ["commands": 2, "readmodels": 2, "audit": 2])
            try bootstrapAdmin(data: data)
            // The store is there; the projectors have made no file yet.
            #expect(try exitCodes() == ["commands": 0, "readmodels": 1, "audit": 1])
            // What a projector's first start leaves: a projection file at the head.
            for name in ["readmodels", "audit"] {
                try strata(["rebuild", name, "--data", data], expecting: 0)
                try FileManager.default.moveItem(atPath: "\(data)/\(name).rebuilt.db", toPath: "\(data)/\(name).db")
            }
            #expect(try exitCodes() == ["commands": 0, "readmodels": 0, "audit": 0])

            // A projection stopped at an event fails its own check and no other.
            let readModels = try SQLiteConnection(path: "\(data)/readmodels.db", mode: .readWrite)
            try readModels.statement(
                """
                UPDATE strata_checkpoint SET stopped_position = ?, stopped_stream = ?, stopped_type = ?,
                  stopped_error = ? WHERE name = ?
                """
            ).run([.integer(2), .text("user-x"), .text("UserRegistered"), .text("a test"), .text("readmodels")])
            #expect(readModels.changes == 1)
            #expect(try exitCodes() == ["commands": 0, "readmodels": 1, "audit": 0])
            let only = try strata(["status", "--only", "readmodels", "--format", "json", "--data", data], expecting: 1)
            let json = try jsonLine(only.stdout.trimmingCharacters(in: .newlines))
            #expect(json["projections"] == ["readmodels": 1])
            #expect(json["errors"]?["readmodels"]?.stringValue?.contains("a test") == true, "\(only.stdout)")
            let store = try strata(["status", "--only", "events", "--format", "json", "--data", data], expecting: 0)
            #expect(store.stdout == "{\"errors\":{},\"head\":1,\"projections\":{},\"running\":{\"serve\":null}}\n")
            try strata(["status", "--data", data], expecting: 1)
            let typo = try strata(["status", "--only", "readmodel", "--data", data], expecting: 2)
            #expect(typo.stderr.contains("--only must be events, readmodels or audit"), "\(typo.stderr)")
        }
    }

    @Test func dockerfileBuildsWithTheToolchainAndReleaseTheTestsRunOn() throws {
        let dockerfile = try Dockerfile.read()
        let codename = try debianCodename()
        let swift = try system("swift", ["--version"])
        // "Swift version 6.3.1 (swift-6.3.1-RELEASE)"
        let version = try #require(
            swift.split(whereSeparator: \.isWhitespace).drop { $0 != "version" }.dropFirst().first, "\(swift)")
        #expect(dockerfile.stages.map(\.image) == ["swift:\(version)-\(codename)", "debian:\(codename)-slim"])
    }

    @Test func dockerfileBuildStageInstallsWhatBootstrapInstalls() throws {
        let bootstrap = try String(contentsOf: repository.appendingPathComponent("scripts/bootstrap"), encoding: .utf8)
        let line = try #require(bootstrap.split(separator: "\n").first { $0.hasPrefix("build_packages=(") })
        let packages = line.dropFirst("build_packages=(".count).prefix { $0 != ")" }
            .split(separator: " ").map(String.init)
        #expect(packages.sorted() == ["libsodium-dev", "libsqlite3-dev", "libzmq3-dev", "pkg-config"])
        let build = try #require(Dockerfile.read().stages.first)
        #expect(build.aptPackages.sorted() == packages.sorted())
    }

    /// The runtime stage installs the Debian packages of the shared libraries the binary links
    /// (found with readelf, ldd and dpkg on this machine, the same Debian release), but those
    /// the slim base image has (glibc, and the C++ runtime its apt needs), and the Swift runtime,
    /// which the image links in statically.
    @Test func dockerfileRuntimeStageInstallsTheLibrariesTheBinaryLinks() throws {
        let binary = ChildProcess.product("strata").path
        let needed = Set(
            try system("readelf", ["-d", binary]).split(separator: "\n")
                .filter { $0.contains("(NEEDED)") }
                .compactMap { $0.split(separator: "[").last?.split(separator: "]").first.map(String.init) })
        // "\tlibzmq.so.5 => /lib/x86_64-linux-gnu/libzmq.so.5 (0x…)"
        let paths = try system("ldd", [binary]).split(separator: "\n").compactMap { line -> String? in
            let words = line.split(whereSeparator: \.isWhitespace)
            guard words.count >= 3, words[1] == "=>", needed.contains(String(words[0])) else { return nil }
            return String(words[2])
        }
        var packages = Set<String>()
        for path in paths {
            // dpkg knows a library by the path its package installed: under /usr since the
            // merge of /lib into /usr, or not. Neither: the Swift toolchain's own libraries.
            for candidate in [path, "/usr" + path] {
                let owner = try ChildProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["dpkg", "-S", candidate])
                guard owner.exitCode == 0, let package = owner.stdout.split(separator: ":").first else { continue }
                packages.insert(String(package))
                break
            }
        }
        #expect(packages.isSuperset(of: ["libc6", "libsqlite3-0", "libzmq5", "libsodium23"]), "\(packages)")
        let runtime = try #require(Dockerfile.read().stages.last)
        #expect(Set(runtime.aptPackages) == packages.subtracting(["libc6", "libgcc-s1", "libstdc++6"]))
    }
}
