import Events
import StrataCore
import Testing

/// A PaymentReceived as version 1 wrote it (no `method`), laid out as a person would
/// write it rather than canonically: the first installment of the sample loan, paid 3 days
/// late (penalty round(360,349 × 3 / 1000) = 1,081), in one go.
let paymentV1 = """
    {
      "paymentId": "pay-00Z9",
      "loanId": "loan-01JD2K9M",
      "amountCents": 361430,
      "paidOn": "2026-12-23",
      "externalRef": "RCPT-2026-1187",
      "notes": "Paid at the branch counter",
      "receivedBy": "agent-7",
      "type": "REGULAR",
      "allocation": {"penaltyCents": 1081, "interestCents": 40000, "principalCents": 320349},
      "perInstallment": [
        {"number": 1, "penaltyCents": 1081, "interestCents": 40000, "principalCents": 320349}
      ],
      "outstandingAfterCents": 720697
    }
    """

/// What `paymentV1` means today.
let paymentV1AsV2 = PaymentReceived(
    paymentId: "pay-00Z9", loanId: "loan-01JD2K9M", amountCents: 361_430, paidOn: LocalDate("2026-12-23")!,
    method: .cash, externalRef: "RCPT-2026-1187", notes: "Paid at the branch counter", receivedBy: "agent-7",
    type: .regular, allocation: PaymentAllocation(penaltyCents: 1_081, interestCents: 40_000, principalCents: 320_349),
    perInstallment: [InstallmentAllocation(number: 1, penaltyAccruedCents: 1_081, penaltyCents: 1_081, interestCents: 40_000, principalCents: 320_349)],
    outstandingAfterCents: 720_697)

/// Decodes `json` through the registry, recording an issue when that fails.
func decodeEvent(
    _ type: String, version: Int, _ json: String, sourceLocation: SourceLocation = #_sourceLocation
) -> StrataEvent? {
    do {
        return try EventRegistry.decode(type: type, schemaVersion: version, data: Array(json.utf8))
    } catch {
        Issue.record("decoding failed: \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Decodes `data` through the registry, expecting it to fail; returns the error.
func decodingError(
    _ type: String, version: Int, _ data: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
) -> EventDecodingError? {
    do {
        let event = try EventRegistry.decode(type: type, schemaVersion: version, data: data)
        Issue.record("expected a decoding error, decoded \(event)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

func decodingError(
    _ type: String, version: Int, _ json: String, sourceLocation: SourceLocation = #_sourceLocation
) -> EventDecodingError? {
    decodingError(type, version: version, Array(json.utf8), sourceLocation: sourceLocation)
}

/// Expects `.invalidData` for `type`/`version` whose message contains every fragment.
func expectInvalidData(
    _ type: String, version: Int, _ json: String, mentioning fragments: [String],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let error = decodingError(type, version: version, json, sourceLocation: sourceLocation) else { return }
    guard case .invalidData(let errorType, let errorVersion, let message) = error else {
        Issue.record("expected invalidData, got \(error)", sourceLocation: sourceLocation)
        return
    }
    #expect(errorType == type, sourceLocation: sourceLocation)
    #expect(errorVersion == version, sourceLocation: sourceLocation)
    for fragment in fragments {
        #expect(message.contains(fragment), "message \"\(message)\" lacks \"\(fragment)\"", sourceLocation: sourceLocation)
    }
}

/// `paymentV1` as a mutable JSON object, to derive broken variants from.
func paymentV1Object() throws -> [String: JSONValue] {
    try #require(try JSONParser.parse(paymentV1).objectValue)
}

func text(_ members: [String: JSONValue]) -> String { CanonicalJSON.string(.object(members)) }

@Suite("Upcasting and decoding errors")
struct UpcasterTests {
    @Test func paymentReceivedV1ReadsAsCash() throws {
        let event = try #require(decodeEvent("PaymentReceived", version: 1, paymentV1))
        guard case .paymentReceived(let payment) = event else {
            Issue.record("decoded as \(event.eventType)")
            return
        }
        #expect(payment.method == .cash)
        #expect(payment == paymentV1AsV2)
        #expect(event.schemaVersion == 2)
    }

    @Test func upcastV1EqualsTheV2ItWouldBeToday() throws {
        let event = try #require(decodeEvent("PaymentReceived", version: 1, paymentV1))
        var expected = try paymentV1Object()
        expected["method"] = "CASH"
        expected["perInstallment"] = [
            ["number": 1, "penaltyAccruedCents": 1081, "penaltyCents": 1081, "interestCents": 40000, "principalCents": 320349]
        ]
        #expect(try event.canonicalData() == CanonicalJSON.bytes(.object(expected)))
    }

    @Test func paymentReceivedV2DecodesUnchanged() throws {
        var members = try paymentV1Object()
        members["method"] = "BANK"
        members["perInstallment"] = [
            ["number": 1, "penaltyAccruedCents": 1081, "penaltyCents": 1081, "interestCents": 40000, "principalCents": 320349]
        ]
        let event = try #require(decodeEvent("PaymentReceived", version: 2, text(members)))
        var expected = paymentV1AsV2
        expected.method = .bank
        #expect(event == .paymentReceived(expected))
        #expect(try event.canonicalData() == CanonicalJSON.bytes(.object(members)))
    }

    @Test func v2WithoutMethodIsInvalidNotCash() throws {
        // Only version 1 means cash; a version 2 event must say how it was paid.
        let members = try paymentV1Object()
        expectInvalidData("PaymentReceived", version: 2, text(members), mentioning: ["method", "missing"])
    }

    @Test func upcasterLeavesAnExistingMethodAndNonObjectsAlone() {
        let withMethod: JSONValue = ["method": "WALLET", "amountCents": 100]
        #expect(Upcasters.paymentReceivedV1ToV2(withMethod) == withMethod)
        #expect(Upcasters.paymentReceivedV1ToV2(["amountCents": 100]) == ["amountCents": 100, "method": "CASH"])
        #expect(Upcasters.paymentReceivedV1ToV2([1, 2]) == [1, 2])
        #expect(Upcasters.paymentReceivedV1ToV2(.null) == .null)
    }

    @Test func everyOlderVersionHasAnUpcasterPath() {
        for type in EventRegistry.eventTypes {
            let current = EventRegistry.currentSchemaVersion(of: type)!
            for version in 1..<current {
                #expect(Upcasters.upcaster(type: type, fromVersion: version) != nil, "\(type) v\(version)")
            }
        }
        for key in Upcasters.table.keys {
            let current = EventRegistry.currentSchemaVersion(of: key.type)
            #expect(current != nil, "upcaster for an unknown type: \(key)")
            #expect((1..<(current ?? 1)).contains(key.fromVersion), "upcaster from no readable version: \(key)")
        }
        #expect(Upcasters.table.count == 1)
    }

    @Test func unknownType() {
        #expect(decodingError("LoanExploded", version: 1, "{}") == .unknownType("LoanExploded"))
        #expect(decodingError("paymentReceived", version: 2, "{}") == .unknownType("paymentReceived"))
        #expect(decodingError("", version: 1, "{}") == .unknownType(""))
    }

    @Test(arguments: [3, 0, -1, 99])
    func unsupportedPaymentReceivedVersions(version: Int) {
        #expect(
            decodingError("PaymentReceived", version: version, paymentV1)
                == .unsupportedSchemaVersion(type: "PaymentReceived", version: version))
    }

    @Test func unsupportedVersionOfAVersionOneType() {
        let json = #"{"agentId":"agent-7","approvedAt":"2026-11-20T10:00:00.123Z","approvedBy":"admin-1"}"#
        #expect(decodingError("AgentApproved", version: 2, json) == .unsupportedSchemaVersion(type: "AgentApproved", version: 2))
        #expect(decodingError("AgentApproved", version: 0, json) == .unsupportedSchemaVersion(type: "AgentApproved", version: 0))
        #expect(decodeEvent("AgentApproved", version: 1, json) == samples.first { $0.eventType == "AgentApproved" })
    }

    @Test func wrongFieldType() throws {
        var members = try paymentV1Object()
        members["method"] = "CASH"
        members["amountCents"] = "361430"
        expectInvalidData("PaymentReceived", version: 2, text(members), mentioning: ["amountCents", "Int64"])
    }

    @Test func wrongFieldTypeInAVersionOneEventNamesTheStoredVersion() throws {
        var members = try paymentV1Object()
        members["paidOn"] = 20_261_223
        expectInvalidData("PaymentReceived", version: 1, text(members), mentioning: ["paidOn", "after upcasting to version 2"])
    }

    @Test func nestedFieldIsNamedByItsPath() throws {
        var members = try paymentV1Object()
        members["perInstallment"] = [["number": 1, "penaltyCents": 1081, "interestCents": 40000, "principalCents": true]]
        expectInvalidData("PaymentReceived", version: 1, text(members), mentioning: ["perInstallment[0].principalCents"])
    }

    @Test func missingField() throws {
        var members = try paymentV1Object()
        members["receivedBy"] = nil
        expectInvalidData("PaymentReceived", version: 1, text(members), mentioning: ["receivedBy", "missing"])
    }

    @Test func unknownEnumValue() throws {
        var members = try paymentV1Object()
        members["method"] = "CHEQUE"
        expectInvalidData("PaymentReceived", version: 2, text(members), mentioning: ["method"])
    }

    @Test func impossibleDate() throws {
        var members = try paymentV1Object()
        members["paidOn"] = "2027-02-30"
        expectInvalidData("PaymentReceived", version: 1, text(members), mentioning: ["paidOn", "2027-02-30"])
    }

    @Test func nullForARequiredField() {
        let json = #"{"agentId":"agent-7","approvedAt":null,"approvedBy":"admin-1"}"#
        expectInvalidData("AgentApproved", version: 1, json, mentioning: ["approvedAt"])
    }

    @Test(arguments: [
        #"{"series":"INV","sequence":42.5,"invoiceNumber":"INV-000042","invoiceId":"inv-1"}"#,
        #"{"series":"INV","sequence":4.2e1,"invoiceNumber":"INV-000042","invoiceId":"inv-1"}"#,
        #"{"series":"INV","sequence":42,"sequence":43,"invoiceNumber":"INV-000042","invoiceId":"inv-1"}"#,
        #"{"series":"INV","sequence":99999999999999999999,"invoiceNumber":"INV-000042","invoiceId":"inv-1"}"#,
        #"{"series":"INV","sequence":42,"invoiceNumber":"INV-000042","invoiceId":"inv-1"} x"#,
        #"{"series":"INV","#,
        "",
    ])
    func notStrictJSON(json: String) {
        expectInvalidData("InvoiceNumberAllocated", version: 1, json, mentioning: ["not strict JSON"])
    }

    @Test func invalidUTF8() {
        let bytes = Array(#"{"series":""#.utf8) + [0xFF, 0xFE] + Array(#"","sequence":1}"#.utf8)
        guard case .invalidData(let type, let version, let message) = decodingError("InvoiceNumberAllocated", version: 1, bytes)
        else {
            Issue.record("expected invalidData")
            return
        }
        #expect(type == "InvoiceNumberAllocated")
        #expect(version == 1)
        #expect(message.contains("INVALID_UTF8"))
    }

    @Test(arguments: ["[]", "42", #""InvoiceNumberAllocated""#, "null"])
    func dataMustBeAnObject(json: String) {
        expectInvalidData("InvoiceNumberAllocated", version: 1, json, mentioning: ["not a JSON object"])
    }

    @Test func v1PaymentThatIsNotAnObjectIsInvalid() {
        expectInvalidData("PaymentReceived", version: 1, "[]", mentioning: ["not a JSON object"])
    }

    @Test func unknownFieldsAreIgnored() {
        let json = #"{"series":"INV","sequence":42,"invoiceNumber":"INV-000042","invoiceId":"inv-01JD4A2B","x":1}"#
        #expect(decodeEvent("InvoiceNumberAllocated", version: 1, json) == samples.first { $0.eventType == "InvoiceNumberAllocated" })
    }

    @Test func errorDescriptionsAreClear() {
        #expect(
            EventDecodingError.unknownType("LoanExploded").description
                == #"unknown event type "LoanExploded": not in the catalog"#)
        #expect(
            EventDecodingError.unsupportedSchemaVersion(type: "PaymentReceived", version: 3).description
                == "PaymentReceived schema version 3 is not supported: this build reads versions 1...2")
        #expect(
            EventDecodingError.unsupportedSchemaVersion(type: "AgentApproved", version: 0).description
                == "AgentApproved schema version 0 is not supported: this build reads version 1")
        #expect(
            EventDecodingError.invalidData(type: "LoanClosed", schemaVersion: 1, message: "paymentId: missing").description
                == "invalid LoanClosed data (schema version 1): paymentId: missing")
    }
}
