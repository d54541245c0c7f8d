import Foundation
import StrataCore
import Testing

/// 64 hex characters: the bytes 0x00, 0x01, … 0x1f.
let sampleSecretHex = (0..<32).map { String(format: "%02x", $0) }.joined()
let sampleSecret = (0..<32).map { UInt8($0) }

/// Expects `json` to be refused as a key file with a message containing `fragment`.
func expectKeyFileRefused(_ json: String, containing fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        let file = try KeyFile(json: Array(json.utf8))
        Issue.record("accepted \(file)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.message.contains(fragment), "message was: \(error.message)", sourceLocation: sourceLocation)
    }
}

@Suite("KeyFile")
struct KeyFileTests {
    @Test func sampleSecretIsWhatItSays() {
        #expect(sampleSecretHex.utf8.count == 64)
        #expect(sampleSecretHex.hasPrefix("000102") && sampleSecretHex.hasSuffix("1e1f"))
    }

    @Test func parsesTheContractExample() throws {
        let json = #"{"keys":[{"id":"svc-mobile","secret":"\#(sampleSecretHex)","scopes":["commands","history"]}]}"#
        let file = try KeyFile(json: Array(json.utf8))
        let key = try #require(file.key("svc-mobile"))
        #expect(key.id == "svc-mobile")
        #expect(key.secret == sampleSecret)
        #expect(key.scopes == [.commands, .history])
        #expect(key.roles == nil)
        #expect(file.key("other") == nil)
        #expect(file.keys.count == 1)
    }

    /// A key file saved by an editor that starts it with a byte order mark reads as without
    /// one, by the service's reload and the command line alike; an error names the file's offset.
    @Test func aByteOrderMarkIsReadPast() throws {
        let json = #"{"keys":[{"id":"svc-mobile","secret":"\#(sampleSecretHex)","scopes":["commands"]}]}"#
        #expect(try KeyFile(json: ByteOrderMark.utf8 + Array(json.utf8)) == KeyFile(json: Array(json.utf8)))
        do {
            _ = try KeyFile(json: ByteOrderMark.utf8 + Array("{".utf8))
            Issue.record("an unfinished key file was read")
        } catch {
            #expect(error.message == "the key file is not valid JSON: UNEXPECTED_END at byte 4", "\(error)")
        }
    }

    @Test func serializesCanonicallyWithANewline() throws {
        var file = KeyFile()
        try file.add(KeyFile.Key(id: "svc-mobile", secret: sampleSecret, scopes: [.history, .commands], roles: ["AGENT"]))
        try file.add(KeyFile.Key(id: "ops", secret: Array(repeating: 0xAB, count: 32), scopes: [.personalData]))
        let text = String(decoding: file.json, as: UTF8.self)
        #expect(
            text
                == #"{"keys":[{"id":"svc-mobile","roles":["AGENT"],"scopes":["commands","history"],"secret":"\#(sampleSecretHex)"},"#
                + #"{"id":"ops","scopes":["personal-data"],"secret":"\#(String(repeating: "ab", count: 32))"}]}"# + "\n")
    }

    @Test func roundTrip() throws {
        var file = KeyFile()
        try file.add(KeyFile.Key(id: "a", secret: sampleSecret, scopes: Set(KeyFile.Scope.allCases), roles: ["ADMIN", "AGENT"]))
        try file.add(KeyFile.Key(id: "b-2", secret: sampleSecret.reversed(), scopes: [.history]))
        try file.add(KeyFile.Key(id: "c_3", secret: Array(repeating: 0xFF, count: 32), scopes: [.commands], roles: []))
        let reread = try KeyFile(json: file.json)
        #expect(reread == file)
        #expect(reread.json == file.json)
        #expect(reread.keys.map(\.id) == ["a", "b-2", "c_3"])
    }

    @Test func uppercaseHexIsReadAndWrittenLowercase() throws {
        let upper = sampleSecretHex.uppercased()
        let file = try KeyFile(json: Array(#"{"keys":[{"id":"k","secret":"\#(upper)","scopes":["history"]}]}"#.utf8))
        #expect(file.key("k")?.secret == sampleSecret)
        #expect(String(decoding: file.json, as: UTF8.self).contains(sampleSecretHex))
    }

    @Test func emptyKeyListIsAFile() throws {
        #expect(try KeyFile(json: Array(#"{"keys":[]}"#.utf8)).keys.isEmpty)
    }

    @Test func scopesAreTheContractsThree() {
        #expect(Set(KeyFile.Scope.allCases.map(\.rawValue)) == ["commands", "history", "personal-data"])
    }

    private static func entry(_ members: String) -> String { #"{"keys":[{\#(members)}]}"# }
    private static let secret = #""secret":"\#(sampleSecretHex)""#

    @Test(arguments: [
        ("", "not valid JSON"), ("{", "not valid JSON"), (#"{"keys":[],"keys":[]}"#, "not valid JSON"),
        ("{}", #"needs a "keys" array"#), ("[]", #"needs a "keys" array"#), (#"{"keys":{}}"#, #"needs a "keys" array"#),
        (#"{"keys":"k"}"#, #"needs a "keys" array"#),
    ])
    func refusesADocumentWithoutKeys(_ json: String, _ fragment: String) {
        expectKeyFileRefused(json, containing: fragment)
    }

    @Test func refusesAnEntryWithoutAnId() {
        expectKeyFileRefused(Self.entry(#"\#(Self.secret),"scopes":["commands"]"#), containing: #"keys[0] needs an "id" string"#)
        expectKeyFileRefused(
            #"{"keys":[{"id":"ok",\#(Self.secret),"scopes":["commands"]},{"id":7,\#(Self.secret),"scopes":["commands"]}]}"#,
            containing: #"keys[1] needs an "id" string"#)
    }

    @Test(arguments: [
        #""secret":"\#(String(sampleSecretHex.dropLast(2)))""#, #""secret":"\#(sampleSecretHex)00""#,
        #""secret":"\#(String(sampleSecretHex.dropLast(2)))zz""#, #""secret":"\#(String(sampleSecretHex.dropLast(1)))g""#,
        #""secret":"""#, #""secret":7"#, #""secret":null"#, #""nosecret":1"#,
    ])
    func refusesABadSecret(_ secret: String) {
        expectKeyFileRefused(Self.entry(#""id":"k",\#(secret),"scopes":["commands"]"#), containing: #"key k: "secret" must be 64 hex characters"#)
    }

    @Test func refusesMissingScopes() {
        expectKeyFileRefused(Self.entry(#""id":"k",\#(Self.secret)"#), containing: #"key k: needs a "scopes" array"#)
        expectKeyFileRefused(Self.entry(#""id":"k",\#(Self.secret),"scopes":"commands""#), containing: #"needs a "scopes" array"#)
    }

    @Test func refusesEmptyScopes() {
        expectKeyFileRefused(Self.entry(#""id":"k",\#(Self.secret),"scopes":[]"#), containing: "a key needs at least one scope")
    }

    @Test(arguments: [#""admin""#, #""Commands""#, "1", "null", #""personal_data""#])
    func refusesAnUnknownScope(_ scope: String) {
        expectKeyFileRefused(
            Self.entry(#""id":"k",\#(Self.secret),"scopes":["history",\#(scope)]"#),
            containing: "key k: unknown scope")
        expectKeyFileRefused(
            Self.entry(#""id":"k",\#(Self.secret),"scopes":[\#(scope)]"#),
            containing: "(known: commands, history, personal-data)")
    }

    @Test func refusesADuplicateId() {
        expectKeyFileRefused(
            #"{"keys":[{"id":"k",\#(Self.secret),"scopes":["commands"]},{"id":"k",\#(Self.secret),"scopes":["history"]}]}"#,
            containing: "a key named k exists already")
    }

    @Test func refusesAnInvalidId() {
        expectKeyFileRefused(Self.entry(#""id":"bad id",\#(Self.secret),"scopes":["commands"]"#), containing: "key id must be")
        expectKeyFileRefused(Self.entry(#""id":"",\#(Self.secret),"scopes":["commands"]"#), containing: "key id must be")
    }

    @Test(arguments: [#""AGENT""#, "[1]", #"["AGENT",null]"#, "{}", "null", #"[["AGENT"]]"#])
    func refusesRolesThatAreNotStrings(_ roles: String) {
        expectKeyFileRefused(
            Self.entry(#""id":"k",\#(Self.secret),"scopes":["commands"],"roles":\#(roles)"#),
            containing: #"key k: "roles" must be an array of strings"#)
    }

    @Test func rolesAreRead() throws {
        let file = try KeyFile(json: Array(Self.entry(#""id":"k",\#(Self.secret),"scopes":["commands"],"roles":["AGENT"]"#).utf8))
        #expect(file.key("k")?.roles == ["AGENT"])
    }

    @Test func addRefuses() throws {
        var file = KeyFile()
        try file.add(KeyFile.Key(id: "k", secret: sampleSecret, scopes: [.commands]))
        #expect(throws: KeyFileError("a key named k exists already")) {
            try file.add(KeyFile.Key(id: "k", secret: sampleSecret, scopes: [.history]))
        }
        #expect(throws: KeyFileError("a key's secret is 32 bytes")) {
            try file.add(KeyFile.Key(id: "short", secret: Array(sampleSecret.dropLast()), scopes: [.history]))
        }
        #expect(throws: KeyFileError("a key needs at least one scope")) {
            try file.add(KeyFile.Key(id: "none", secret: sampleSecret, scopes: []))
        }
        #expect(throws: KeyFileError.self) {
            try file.add(KeyFile.Key(id: "bad/id", secret: sampleSecret, scopes: [.history]))
        }
        #expect(file.keys.map(\.id) == ["k"])
        #expect(KeyFileError("x").description == "x")
    }
}
