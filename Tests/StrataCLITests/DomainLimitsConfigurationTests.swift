import Domain
import Foundation
import StrataTesting
import Testing

@testable import StrataCLI

/// The domain limits of the config file (`domain`): read from an explicit or the implicit
/// file, each one optional, and refused with the key and its range when out of it.
@Suite("Configuration: domain limits")
struct DomainLimitsConfigurationTests {
    /// The limits `text` resolves to, read as an explicit and as the implicit config file.
    private func resolvedLimits(
        _ text: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> DomainConfiguration {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeText(text, to: dir.path + "/c.json", sourceLocation: sourceLocation)
        try writeText(text, to: dir.path + "/strata.json", sourceLocation: sourceLocation)
        let explicit = try Configuration.resolve(
            options(["data": dir.path + "/d", "config": dir.path + "/c.json"]), environment: [:])
        let implicit = try Configuration.resolve(options(["data": dir.path]), environment: [:])
        #expect(explicit.domain == implicit.domain, sourceLocation: sourceLocation)
        return explicit.domain
    }

    @Test func withoutADomainObjectTheDefaultsHold() throws {
        let limits = try resolvedLimits(#"{"commands": "tcp://x:1"}"#)
        #expect(limits == DomainConfiguration())
        #expect(limits.maximumPrincipalCents == 100_000_000)
        #expect(limits.minimumCashoutCents == 10_000)
        #expect(limits.taxSlabsBp == [0, 500, 1_200, 1_800, 2_800])
        #expect(try resolvedLimits(#"{"domain": {}}"#) == DomainConfiguration())
    }

    @Test func theFileSetsEachLimit() throws {
        let limits = try resolvedLimits(
            #"{"domain": {"maximumPrincipalCents": 500000, "minimumCashoutCents": 2500, "taxSlabsBp": [1000, 0]}}"#)
        var expected = DomainConfiguration()
        expected.maximumPrincipalCents = 500_000
        expected.minimumCashoutCents = 2_500
        expected.taxSlabsBp = [1_000, 0]
        #expect(limits == expected)
    }

    @Test func aLimitLeftOutKeepsItsDefault() throws {
        let limits = try resolvedLimits(#"{"domain": {"minimumCashoutCents": 1}}"#)
        var expected = DomainConfiguration()
        expected.minimumCashoutCents = 1
        #expect(limits == expected)
    }

    @Test func theEndsOfEachRangeAreAccepted() throws {
        let low = try resolvedLimits(
            #"{"domain": {"maximumPrincipalCents": 1, "minimumCashoutCents": 1, "taxSlabsBp": [0]}}"#)
        #expect(low.maximumPrincipalCents == 1 && low.minimumCashoutCents == 1 && low.taxSlabsBp == [0])
        let high = try resolvedLimits(
            #"{"domain": {"maximumPrincipalCents": 1000000000000000, "minimumCashoutCents": 1000000000000000, "#
                + #""taxSlabsBp": [10000]}}"#)
        #expect(high.maximumPrincipalCents == PayloadLimits.maximumAmountCents)
        #expect(high.minimumCashoutCents == PayloadLimits.maximumAmountCents)
        #expect(high.taxSlabsBp == [10_000])
    }

    static let cents = "must be an integer of cents from 1 to 1000000000000000"
    static let principalRule = "'domain.maximumPrincipalCents' " + cents
    static let cashoutRule = "'domain.minimumCashoutCents' " + cents
    static let slabRule =
        "'domain.taxSlabsBp' must be a non-empty array of distinct integers from 0 to 10000 (basis points)"

    @Test(arguments: [
        (
            #"{"domain": 5}"#,
            "'domain' must be a JSON object of limits (maximumPrincipalCents, minimumCashoutCents, taxSlabsBp)"
        ),
        (#"{"domain": "maximumPrincipalCents=5"}"#, "'domain' must be a JSON object of limits"),
        (#"{"domain": {"maximumPrincipal": 5}}"#, "unknown setting 'domain.maximumPrincipal' (known: maximumPrincipal"),
        (#"{"domain": {"commands": "tcp://x:1"}}"#, "unknown setting 'domain.commands'"),
        (#"{"maximumPrincipalCents": 500}"#, "unknown setting 'maximumPrincipalCents' (known: commands, data, domain"),
        (#"{"domain": {"maximumPrincipalCents": 0}}"#, principalRule),
        (#"{"domain": {"maximumPrincipalCents": -100}}"#, principalRule),
        (#"{"domain": {"maximumPrincipalCents": 1000000000000001}}"#, principalRule),
        (#"{"domain": {"maximumPrincipalCents": "500"}}"#, principalRule),
        (#"{"domain": {"maximumPrincipalCents": null}}"#, principalRule),
        (#"{"domain": {"maximumPrincipalCents": 1.5}}"#, "is not valid JSON"),
        (#"{"domain": {"minimumCashoutCents": 0}}"#, cashoutRule),
        (#"{"domain": {"minimumCashoutCents": 1000000000000001}}"#, cashoutRule),
        (#"{"domain": {"minimumCashoutCents": [10000]}}"#, cashoutRule),
        (#"{"domain": {"taxSlabsBp": []}}"#, slabRule),
        (#"{"domain": {"taxSlabsBp": "0,500"}}"#, slabRule),
        (#"{"domain": {"taxSlabsBp": 500}}"#, slabRule),
        (#"{"domain": {"taxSlabsBp": [0, 500, 500]}}"#, slabRule + "; 500 is there twice"),
        (#"{"domain": {"taxSlabsBp": [0, 10001]}}"#, slabRule + "; 10001 is not"),
        (#"{"domain": {"taxSlabsBp": [-500]}}"#, slabRule + "; -500 is not"),
        (#"{"domain": {"taxSlabsBp": ["500"]}}"#, slabRule + #"; "500" is not"#),
        (#"{"domain": {"taxSlabsBp": [null]}}"#, slabRule + "; null is not"),
    ])
    func outOfRangeLimitsAreRefused(_ text: String, _ fragment: String) throws {
        let dir = try ChildProcess.temporaryDirectory("strata-config")
        defer { try? FileManager.default.removeItem(at: dir) }
        try writeText(text, to: dir.path + "/c.json")
        expectConfigurationError(["config": dir.path + "/c.json"], containing: fragment)
        expectConfigurationError(["config": dir.path + "/c.json"], containing: "config file \(dir.path)/c.json")
        try writeText(text, to: dir.path + "/strata.json")
        expectConfigurationError(["data": dir.path], containing: fragment)
    }
}
