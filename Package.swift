// swift-tools-version:6.0
// Strata: an event-sourced CQRS backend. No Swift package dependencies by design:
// the toolchain plus three C libraries from Debian (SQLite, libzmq, libsodium).
import PackageDescription

let strict: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "strata",
    products: [
        .executable(name: "strata", targets: ["strata"]),
        .library(name: "StrataTesting", targets: ["StrataTesting"]),
    ],
    targets: [
        // C libraries, bound through module maps; `scripts/bootstrap` installs them.
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        // No pkgConfig here: libzmq's .pc file adds Kerberos include flags SwiftPM refuses,
        // and zmq.h sits in the default include path on Debian anyway.
        .systemLibrary(
            name: "CZeroMQ", path: "Sources/CZeroMQ", providers: [.apt(["libzmq3-dev"])]),
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),
        // What Swift's Glibc module leaves out: mallopt (`AllocatorTuning`) and thread names
        // (`startThread`).
        .systemLibrary(name: "CSystem", path: "Sources/CSystem"),

        // The vocabulary every other target speaks: JSON and its canonical form,
        // calendar dates and timestamps, identifiers, the contract's error codes, the key file
        // (whose CURVE keys libzmq encodes and checks, hence CZeroMQ).
        .target(name: "StrataCore", dependencies: ["CZeroMQ", "CSystem"], swiftSettings: strict),
        // The event catalog: one value type per event, schema versions, upcasters.
        .target(name: "Events", dependencies: ["StrataCore"], path: "Events", swiftSettings: strict),
        // The business rules as pure deciders: commands in, events or a refusal out.
        // No I/O, no clock, no randomness; "now" and configuration come in a context.
        .target(name: "Domain", dependencies: ["Events", "StrataCore"], swiftSettings: strict),
        // What a projection is; the projector issue fills it with read models.
        .target(
            name: "Projections", dependencies: ["Events", "StrataCore"], path: "Projections",
            swiftSettings: strict),
        // A small safe layer over SQLite's C API: prepared statements, typed errors.
        .target(name: "StrataSQLite", dependencies: ["CSQLite", "StrataCore"], swiftSettings: strict),
        // The SQLite event store: atomic multi-stream append, journal, hash chain.
        .target(
            name: "EventStore", dependencies: ["Events", "StrataCore", "StrataSQLite", "CSodium"],
            swiftSettings: strict),
        // Personal data sealed per data subject, and the key store whose keys erasure destroys.
        .target(
            name: "SubjectKeys", dependencies: ["Events", "StrataCore", "StrataSQLite", "CSodium"],
            swiftSettings: strict),
        // A small safe layer over libzmq, and the wire envelope: signed requests.
        .target(name: "Bus", dependencies: ["CZeroMQ", "CSodium", "StrataCore"], swiftSettings: strict),
        // `strata serve`: ingress, authentication, the group-commit writer, fan-out, history.
        .target(
            name: "CommandService",
            dependencies: ["Bus", "Domain", "EventStore", "Events", "StrataCore", "SubjectKeys"],
            swiftSettings: strict),
        // Realistic command streams (a lending and invoicing business) for the demo,
        // the benchmarks and the end-to-end tests.
        .target(
            name: "Workloads", dependencies: ["CommandService", "Domain", "Events", "StrataCore"],
            swiftSettings: strict),
        // The projector path: subscribe, catch up through history, apply in batches with the
        // checkpoint in the same transaction; rebuild and compare.
        .target(
            name: "ProjectorRuntime",
            dependencies: ["Bus", "CZeroMQ", "EventStore", "Events", "Projections", "StrataCore", "StrataSQLite"],
            swiftSettings: strict),
        // Test support shipped as a library: in-memory store, fixed clock, domain scenarios.
        .target(
            name: "StrataTesting",
            dependencies: ["Bus", "Domain", "EventStore", "Events", "ProjectorRuntime", "Projections", "StrataCore"],
            swiftSettings: strict),
        // The command line: argument parsing, configuration, subcommands.
        .target(
            name: "StrataCLI",
            dependencies: [
                "Bus", "CommandService", "Domain", "EventStore", "Events", "ProjectorRuntime", "Projections",
                "StrataCore", "StrataSQLite", "SubjectKeys", "Workloads", "CSodium", "CSystem",
            ],
            swiftSettings: strict),
        .executableTarget(name: "strata", dependencies: ["StrataCLI"], swiftSettings: strict),

        // A child process for crash tests: appends until it is killed.
        .executableTarget(
            name: "StoreCrashWriter", dependencies: ["EventStore", "Events", "StrataCore"],
            path: "Tests/StoreCrashWriter", swiftSettings: strict),
        // The parsers hostile bytes reach, for libFuzzer (scripts/fuzz) and, built plainly,
        // a replay of the fuzzing corpus that FuzzCorpusTests run.
        .executableTarget(
            name: "StrataFuzz", dependencies: ["Bus", "CLibFuzzer", "CommandService", "Domain", "Events", "StrataCore"],
            path: "Tests/Fuzz", exclude: ["corpus", "CLibFuzzer"], swiftSettings: strict),
        .systemLibrary(name: "CLibFuzzer", path: "Tests/Fuzz/CLibFuzzer"),

        .testTarget(name: "StrataCoreTests", dependencies: ["StrataCore", "StrataTesting"], swiftSettings: strict),
        .testTarget(
            name: "EventsTests", dependencies: ["Events", "StrataCore", "StrataTesting"], swiftSettings: strict),
        .testTarget(
            name: "CommandServiceTests",
            dependencies: [
                "CommandService", "Bus", "Domain", "EventStore", "Events", "StrataCore", "StrataFuzz", "StrataTesting",
                "StrataSQLite", "SubjectKeys", "Workloads",
            ],
            swiftSettings: strict),
        // End to end: the real `strata serve` process, talked to over ZeroMQ on loopback.
        .testTarget(
            name: "ServiceTests",
            dependencies: [
                "strata", "Bus", "CommandService", "EventStore", "Events", "ProjectorRuntime", "Projections", "StrataCore",
                "StrataSQLite", "StrataTesting", "SubjectKeys", "Workloads",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "ProjectionsTests",
            dependencies: ["Projections", "ProjectorRuntime", "EventStore", "Events", "StrataCore", "StrataSQLite", "StrataTesting"],
            swiftSettings: strict),
        .testTarget(
            name: "SubjectKeysTests",
            dependencies: ["SubjectKeys", "Events", "StrataCore", "StrataSQLite", "StrataTesting"],
            swiftSettings: strict),
        .testTarget(name: "BusTests", dependencies: ["Bus", "StrataCore", "StrataTesting"], swiftSettings: strict),
        .testTarget(
            name: "DomainTests", dependencies: ["Domain", "StrataTesting", "Events", "StrataCore"],
            swiftSettings: strict),
        .testTarget(
            name: "EventStoreTests",
            dependencies: [
                "EventStore", "StrataTesting", "Events", "StrataCore", "StoreCrashWriter", "StrataSQLite", "CSQLite",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "StrataCLITests",
            dependencies: [
                "StrataCLI", "strata", "CommandService", "EventStore", "ProjectorRuntime", "Projections", "StrataSQLite",
                "StrataTesting", "Events", "StrataCore", "SubjectKeys",
            ],
            swiftSettings: strict),
    ]
)
