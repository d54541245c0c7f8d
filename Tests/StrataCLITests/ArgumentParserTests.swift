import Testing

@testable import StrataCLI

/// A command shaped like the real ones: one required and one optional positional, options
/// with values, a flag.
let exampleSpec = CommandSpec(
    ["example", "run"], summary: "An example command for the parser's tests.",
    arguments: [ArgumentSpec("FIRST", help: "the first thing"), ArgumentSpec("SECOND", help: "the second thing", optional: true)],
    options: [
        OptionSpec("data", value: "DIR", help: "Where the data is."),
        OptionSpec("count", value: "N", help: "How many."),
        OptionSpec("scope", value: "LIST", help: "Comma-separated scopes."),
        OptionSpec("json", help: "JSON output."),
        OptionSpec("dry-run", help: "Do nothing."),
    ],
    discussion: "Exit codes: 0 ok.")

/// Parses `arguments` against `spec`, requiring a parse (not help).
func parsed(
    _ arguments: [String], spec: CommandSpec = exampleSpec, sourceLocation: SourceLocation = #_sourceLocation
) throws -> ParsedArguments {
    let result = try ArgumentParser.parse(arguments, spec: spec)
    guard case .parsed(let parsed) = result else {
        Issue.record("expected a parse, got \(result)", sourceLocation: sourceLocation)
        return ParsedArguments()
    }
    return parsed
}

/// Expects `arguments` to be a usage error whose message contains `fragment`.
func expectUsageError(
    _ arguments: [String], containing fragment: String, spec: CommandSpec = exampleSpec,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let result = try ArgumentParser.parse(arguments, spec: spec)
        Issue.record("expected a usage error, got \(result)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.message.contains(fragment), "message was: \(error.message)", sourceLocation: sourceLocation)
    }
}

@Suite("ArgumentParser")
struct ArgumentParserTests {
    @Test func optionWithSeparateValue() throws {
        let p = try parsed(["x", "--data", "/tmp/d"])
        #expect(p.value("data") == "/tmp/d")
        #expect(p.positionals == ["x"])
        #expect(p.value("count") == nil)
    }

    @Test func optionWithInlineValue() throws {
        let p = try parsed(["--data=/tmp/d", "x"])
        #expect(p.value("data") == "/tmp/d")
        #expect(p.positionals == ["x"])
        // Only the first '=' separates: the value may contain more.
        #expect(try parsed(["x", "--data=a=b"]).value("data") == "a=b")
    }

    @Test func valuesMayLookLikeShortOptionsOrNumbers() throws {
        #expect(try parsed(["x", "--count", "-3"]).value("count") == "-3")
        #expect(try parsed(["x", "--data", "-"]).value("data") == "-")
    }

    @Test func flags() throws {
        let p = try parsed(["x", "--json", "--dry-run"])
        #expect(p.flag("json"))
        #expect(p.flag("dry-run"))
        #expect(p.flags == ["json", "dry-run"])
        #expect(!(try parsed(["x"]).flag("json")))
    }

    @Test func optionsAndPositionalsInterleave() throws {
        let p = try parsed(["--json", "one", "--data", "d", "two"])
        #expect(p.positionals == ["one", "two"])
        #expect(p.value("data") == "d")
        #expect(p.flag("json"))
    }

    @Test func doubleDashEndsOptions() throws {
        let p = try parsed(["--json", "--", "--data", "-h"])
        #expect(p.positionals == ["--data", "-h"])
        #expect(p.flags == ["json"])
        #expect(p.values.isEmpty)
        // `--help` after `--` is a positional too.
        #expect(try parsed(["--", "--help"]).positionals == ["--help"])
    }

    @Test func singleDashIsAPositional() throws {
        #expect(try parsed(["-"]).positionals == ["-"])
        #expect(try parsed(["a", "-"]).positionals == ["a", "-"])
    }

    @Test(arguments: [["--help"], ["-h"], ["x", "--help"], ["--json", "-h", "extra", "args", "too"], ["--data", "d", "--help"]])
    func helpWinsOverEverythingAfterIt(_ arguments: [String]) throws {
        #expect(try ArgumentParser.parse(arguments, spec: exampleSpec) == .help)
    }

    @Test func unknownOptions() {
        expectUsageError(["x", "--nope"], containing: "unknown option '--nope' for strata example run")
        expectUsageError(["x", "--nope=1"], containing: "unknown option '--nope'")
        expectUsageError(["x", "-x"], containing: "unknown option '-x'")
        expectUsageError(["x", "-json"], containing: "unknown option '-json'")
        expectUsageError(["x", "--JSON"], containing: "unknown option '--JSON'")
    }

    @Test func optionGivenTwice() {
        expectUsageError(["x", "--data", "a", "--data", "b"], containing: "--data is given more than once")
        expectUsageError(["x", "--data=a", "--data", "b"], containing: "--data is given more than once")
        expectUsageError(["x", "--json", "--json"], containing: "--json is given more than once")
    }

    @Test func flagWithValue() {
        expectUsageError(["x", "--json=true"], containing: "--json takes no value")
        expectUsageError(["x", "--json="], containing: "--json takes no value")
    }

    @Test func missingValue() {
        expectUsageError(["x", "--data"], containing: "--data needs a value (DIR)")
        expectUsageError(["x", "--data", "--json"], containing: "--data needs a value (DIR)")
        expectUsageError(["--count", "--data", "d", "x"], containing: "--count needs a value (N)")
    }

    @Test func missingRequiredPositional() {
        expectUsageError([], containing: "strata example run needs FIRST (the first thing)")
        expectUsageError(["--json", "--data", "d"], containing: "needs FIRST")
    }

    @Test func tooManyPositionals() {
        expectUsageError(["a", "b", "c"], containing: "unexpected argument 'c' for strata example run")
        let none = CommandSpec(["verify"], summary: "s")
        expectUsageError(["extra"], containing: "unexpected argument 'extra' for strata verify", spec: none)
    }

    @Test func optionalPositional() throws {
        #expect(try parsed(["a"]).positionals == ["a"])
        #expect(try parsed(["a", "b"]).positionals == ["a", "b"])
    }

    @Test func noArgumentsForACommandWithoutPositionals() throws {
        let spec = CommandSpec(["verify"], summary: "s", options: [OptionSpec("json", help: "j")])
        #expect(try parsed([], spec: spec) == ParsedArguments())
    }

    @Test func integerInRange() throws {
        var p = ParsedArguments()
        #expect(try p.integer("count", in: 1...10) == nil)
        p.values["count"] = "5"
        #expect(try p.integer("count", in: 1...10) == 5)
        p.values["count"] = "-9223372036854775808"
        #expect(try p.integer("count") == Int64.min)
        p.values["count"] = "10"
        #expect(try p.integer("count", in: 1...10) == 10)
        p.values["count"] = "1"
        #expect(try p.integer("count", in: 1...10) == 1)
    }

    @Test(arguments: ["0", "11", "-1", "abc", "1.5", " 5", "5 ", "", "1e3", "0x10", "99999999999999999999"])
    func integerOutOfRangeOrNotAnInteger(_ text: String) {
        var p = ParsedArguments()
        p.values["count"] = text
        #expect(throws: UsageError("--count must be an integer in 1...10, got '\(text)'")) {
            try p.integer("count", in: 1...10)
        }
    }

    @Test func list() throws {
        var p = ParsedArguments()
        #expect(p.list("scope") == nil)
        p.values["scope"] = "commands, history ,,personal-data "
        #expect(p.list("scope") == ["commands", "history", "personal-data"])
        p.values["scope"] = "commands"
        #expect(p.list("scope") == ["commands"])
        p.values["scope"] = ""
        #expect(p.list("scope") == [])
        p.values["scope"] = " , ,"
        #expect(p.list("scope") == [])
        #expect(try parsed(["x", "--scope", "a b, c"]).list("scope") == ["a b", "c"])
    }

    @Test func helpListsEveryOptionAndArgument() {
        let help = ArgumentParser.help(for: exampleSpec)
        #expect(help.hasPrefix("An example command for the parser's tests.\n"))
        #expect(help.contains("Usage: strata example run FIRST [SECOND] [options]"))
        for argument in exampleSpec.arguments {
            #expect(help.contains("  \(argument.name)  ") && help.contains(argument.help), "\(argument.name)")
        }
        for option in exampleSpec.options {
            let shown = "--" + option.name + (option.valueName.map { " " + $0 } ?? "")
            #expect(help.contains("  " + shown + " "), "\(shown)")
            #expect(help.contains(option.help), "\(option.help)")
        }
        #expect(help.contains("--help"))
        #expect(help.contains("Exit codes: 0 ok."))
        #expect(help.hasSuffix("\n"))
    }

    @Test func helpOfACommandWithoutOptions() {
        let help = ArgumentParser.help(for: CommandSpec(["bare"], summary: "Bare."))
        #expect(help.contains("Usage: strata bare\n"))
        #expect(!help.contains("[options]"))
        #expect(help.contains("--help"))
    }

    /// Every real subcommand's help names all its options and arguments, and every option
    /// it names is one the parser accepts.
    @Test(arguments: StrataCommandLine.subcommands.map(\.spec.words))
    func realHelpMatchesRealSpecs(_ words: [String]) throws {
        let spec = try #require(StrataCommandLine.subcommands.first { $0.spec.words == words }?.spec)
        let help = ArgumentParser.help(for: spec)
        #expect(help.contains("Usage: " + spec.name))
        for option in spec.options {
            #expect(help.contains("--" + option.name), "\(option.name)")
        }
        for argument in spec.arguments {
            #expect(help.contains(argument.name))
        }
        #expect(Set(spec.options.map(\.name)).count == spec.options.count, "an option is declared twice")
    }

    @Test func usageErrorDescription() {
        #expect(UsageError("m").description == "m")
    }

    @Test(arguments: [["x", "--data", ""], ["x", "--data="]])
    func emptyValuesAreRefused(_ arguments: [String]) {
        #expect(throws: UsageError("--data needs a non-empty value (DIR)")) {
            try ArgumentParser.parse(arguments, spec: exampleSpec)
        }
    }
}
