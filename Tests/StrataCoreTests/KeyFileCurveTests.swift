import StrataCore
import Testing

/// The key file's CURVE keys: the service's pair under "curveServer", a client pair per key.
@Suite("KeyFile: CURVE keys")
struct KeyFileCurveTests {
    typealias K = DocumentedCurveKeys

    private static let secret = #""secret":"\#(sampleSecretHex)""#
    private static let server = #""curveServer":{"public":"\#(K.serverPublic)","secret":"\#(K.serverSecret)"}"#
    private static let clientPair = #""curvePublic":"\#(K.clientPublic)","curveSecret":"\#(K.clientSecret)""#

    private static func file(server: String = server, _ members: String) -> String {
        #"{\#(server.isEmpty ? "" : server + ",")"keys":[{"id":"k",\#(secret),"scopes":["history"]\#(members)}]}"#
    }

    @Test func readsTheServiceCopy() throws {
        let file = try KeyFile(json: Array(Self.file("," + Self.clientPair).utf8))
        #expect(file.curveServerPublic == K.key(K.serverPublic))
        #expect(file.curveServerSecret == K.key(K.serverSecret))
        #expect(file.curveServerPair?.publicKey == K.key(K.serverPublic))
        let key = try #require(file.key("k"))
        #expect(key.curvePublic == K.key(K.clientPublic))
        #expect(key.curveSecret == K.key(K.clientSecret))
        let client = try #require(try file.curveClientKeys(for: key))
        #expect(client.serverKey == K.key(K.serverPublic))
        #expect(client.client.publicKey == K.key(K.clientPublic))
        #expect(client.client.secretKey == K.key(K.clientSecret))
    }

    /// A client's copy: the server's public key only. The service's copy may in turn hold a
    /// client's public key only.
    @Test func readsHalfCopies() throws {
        let publicOnly = #""curveServer":{"public":"\#(K.serverPublic)"}"#
        let client = try KeyFile(json: Array(Self.file(server: publicOnly, "," + Self.clientPair).utf8))
        #expect(client.curveServerPublic == K.key(K.serverPublic))
        #expect(client.curveServerSecret == nil)
        #expect(client.curveServerPair == nil)
        #expect(try client.curveClientKeys(for: client.key("k")!)?.serverKey == K.key(K.serverPublic))

        let service = try KeyFile(json: Array(Self.file(#","curvePublic":"\#(K.clientPublic)""#).utf8))
        #expect(service.curveServerPair != nil)
        #expect(service.key("k")?.curvePublic == K.key(K.clientPublic))
        #expect(service.key("k")?.curveSecret == nil)
        #expect(service.key("k")?.curvePair == nil)
    }

    @Test func writesCanonicallyAndRoundTrips() throws {
        var file = KeyFile()
        try file.setCurveServer(publicKey: K.key(K.serverPublic), secretKey: K.key(K.serverSecret))
        try file.add(
            KeyFile.Key(
                id: "k", secret: sampleSecret, scopes: [.history], curvePublic: K.key(K.clientPublic),
                curveSecret: K.key(K.clientSecret)))
        try file.add(KeyFile.Key(id: "plain", secret: sampleSecret, scopes: [.commands]))
        let text = String(decoding: file.json, as: UTF8.self)
        #expect(
            text
                == #"{"curveServer":{"public":"\#(K.serverPublic)","secret":"\#(K.serverSecret)"},"keys":["#
                + #"{"curvePublic":"\#(K.clientPublic)","curveSecret":"\#(K.clientSecret)","id":"k","#
                + #""scopes":["history"],"secret":"\#(sampleSecretHex)"},"#
                + #"{"id":"plain","scopes":["commands"],"secret":"\#(sampleSecretHex)"}]}"#
                + "\n")
        #expect(try KeyFile(json: file.json) == file)

        var clientCopy = KeyFile()
        try clientCopy.setCurveServer(publicKey: K.key(K.serverPublic), secretKey: nil)
        #expect(
            String(decoding: clientCopy.json, as: UTF8.self)
                == #"{"curveServer":{"public":"\#(K.serverPublic)"},"keys":[]}"# + "\n")
        #expect(try KeyFile(json: clientCopy.json) == clientCopy)
    }

    @Test func aFileWithoutCurveKeysAsksForNone() throws {
        let file = try KeyFile(json: Array(Self.file(server: "", "").utf8))
        #expect(file.curveServerPublic == nil)
        #expect(try file.curveClientKeys(for: file.key("k")!) == nil)
        #expect(!String(decoding: file.json, as: UTF8.self).contains("curve"))
        // A client pair alone asks for nothing either: there is no server to present it to.
        let clientOnly = try KeyFile(json: Array(Self.file(server: "", "," + Self.clientPair).utf8))
        #expect(try clientOnly.curveClientKeys(for: clientOnly.key("k")!) == nil)
    }

    @Test func aKeyWithoutAPairCannotReachACurveService() throws {
        let file = try KeyFile(json: Array(Self.file(#","curvePublic":"\#(K.clientPublic)""#).utf8))
        #expect(
            throws: KeyFileError(
                #"key k has no CURVE key pair ("curvePublic" and "curveSecret"), but the key file holds the service's "#
                    + "CURVE key, so the service would refuse its connections")
        ) {
            try file.curveClientKeys(for: file.key("k")!)
        }
    }

    private static let badZ85 = [
        #""""#, "7", "null", #""\#(K.clientPublic.dropLast())""#, #""\#(K.clientPublic)0""#,
        #""\#(K.clientPublic.dropLast()) ""#, #""\#(String(repeating: "#", count: 40))""#,
        #""\#(sampleSecretHex)""#,
    ]

    @Test(arguments: badZ85)
    func refusesABadClientKey(_ value: String) {
        let message = "must be a CURVE key of 40 Z85 characters, as zmq_curve_keypair makes them"
        expectKeyFileRefused(Self.file(#","curvePublic":\#(value)"#), containing: #"key k: "curvePublic" \#(message)"#)
        expectKeyFileRefused(
            Self.file(#","curvePublic":"\#(K.clientPublic)","curveSecret":\#(value)"#),
            containing: #"key k: "curveSecret" \#(message)"#)
    }

    @Test(arguments: badZ85)
    func refusesABadServerKey(_ value: String) {
        let message = "must be a CURVE key of 40 Z85 characters, as zmq_curve_keypair makes them"
        expectKeyFileRefused(
            Self.file(server: #""curveServer":{"public":\#(value)}"#, ""),
            containing: #"curveServer: "public" \#(message)"#)
        expectKeyFileRefused(
            Self.file(server: #""curveServer":{"public":"\#(K.serverPublic)","secret":\#(value)}"#, ""),
            containing: #"curveServer: "secret" \#(message)"#)
    }

    @Test(arguments: [#""curveServer":"x""#, #""curveServer":[]"#, #""curveServer":{}"#, #""curveServer":null"#,
        #""curveServer":{"secret":"\#(K.serverSecret)"}"#])
    func refusesAServerEntryWithoutAPublicKey(_ server: String) {
        expectKeyFileRefused(
            Self.file(server: server, ""), containing: #""curveServer" must be an object with a "public" key"#)
    }

    @Test func refusesMismatchedPairs() {
        expectKeyFileRefused(
            Self.file(server: #""curveServer":{"public":"\#(K.serverPublic)","secret":"\#(K.clientSecret)"}"#, ""),
            containing: #"curveServer: "public" is not the public key of "secret""#)
        expectKeyFileRefused(
            Self.file(#","curvePublic":"\#(K.serverPublic)","curveSecret":"\#(K.clientSecret)""#),
            containing: #"key k: "curvePublic" is not the public key of "curveSecret""#)
    }

    @Test func refusesASecretWithoutItsPublicKey() {
        expectKeyFileRefused(
            Self.file(#","curveSecret":"\#(K.clientSecret)""#),
            containing: #"key k: "curveSecret" needs its "curvePublic""#)
    }

    @Test func refusesTwoKeysWithOneCurveKey() {
        let entry = #""secret":"\#(sampleSecretHex)","scopes":["history"],"curvePublic":"\#(K.clientPublic)""#
        expectKeyFileRefused(
            #"{"keys":[{"id":"a",\#(entry)},{"id":"b",\#(entry)}]}"#,
            containing: #"keys a and b have the same "curvePublic""#)
    }

    @Test func setCurveServerAndAddRefuseMismatches() throws {
        var file = KeyFile()
        #expect(throws: KeyFileError(#"curveServer: "public" is not the public key of "secret""#)) {
            try file.setCurveServer(publicKey: K.key(K.clientPublic), secretKey: K.key(K.serverSecret))
        }
        #expect(file.curveServerPublic == nil)
        #expect(throws: KeyFileError(#"key k: "curvePublic" is not the public key of "curveSecret""#)) {
            try file.add(
                KeyFile.Key(
                    id: "k", secret: sampleSecret, scopes: [.history], curvePublic: K.key(K.serverPublic),
                    curveSecret: K.key(K.clientSecret)))
        }
        #expect(file.keys.isEmpty)
    }
}
