import StrataCore

/// Any event of the catalog, as one closed type: what readers (projectors, the audit
/// log, deciders folding a stream) switch over.
public enum StrataEvent: Sendable, Hashable {
    // user
    case userRegistered(UserRegistered)
    case agentApproved(AgentApproved)
    case agentRejected(AgentRejected)
    case profileUpdated(ProfileUpdated)
    // account
    case accountOpened(AccountOpened)
    case accountUpdated(AccountUpdated)
    case accountStatusChanged(AccountStatusChanged)
    // loan
    case loanRequested(LoanRequested)
    case loanApproved(LoanApproved)
    case loanRejected(LoanRejected)
    case paymentReceived(PaymentReceived)
    case loanClosed(LoanClosed)
    // agent (earnings)
    case commissionEarned(CommissionEarned)
    case earningsReserved(EarningsReserved)
    case earningsReleased(EarningsReleased)
    // cashout
    case cashoutRequested(CashoutRequested)
    case cashoutApproved(CashoutApproved)
    case cashoutRejected(CashoutRejected)
    // settings
    case commissionRateChanged(CommissionRateChanged)
    // invoice
    case invoiceCreated(InvoiceCreated)
    case invoicePaymentRecorded(InvoicePaymentRecorded)
    case invoicePaid(InvoicePaid)
    case invoiceCancelled(InvoiceCancelled)
    // invoiceseries
    case invoiceNumberAllocated(InvoiceNumberAllocated)
    // personal data (the subject's stream)
    case personalDataErased(PersonalDataErased)

    /// The wrapped event.
    public var payload: any DomainEvent {
        switch self {
        case .userRegistered(let e): e
        case .agentApproved(let e): e
        case .agentRejected(let e): e
        case .profileUpdated(let e): e
        case .accountOpened(let e): e
        case .accountUpdated(let e): e
        case .accountStatusChanged(let e): e
        case .loanRequested(let e): e
        case .loanApproved(let e): e
        case .loanRejected(let e): e
        case .paymentReceived(let e): e
        case .loanClosed(let e): e
        case .commissionEarned(let e): e
        case .earningsReserved(let e): e
        case .earningsReleased(let e): e
        case .cashoutRequested(let e): e
        case .cashoutApproved(let e): e
        case .cashoutRejected(let e): e
        case .commissionRateChanged(let e): e
        case .invoiceCreated(let e): e
        case .invoicePaymentRecorded(let e): e
        case .invoicePaid(let e): e
        case .invoiceCancelled(let e): e
        case .invoiceNumberAllocated(let e): e
        case .personalDataErased(let e): e
        }
    }

    /// The stable type name stored with the event and used in bus topics.
    public var eventType: String { type(of: payload).eventType }

    /// The schema version this value has: always the current one, since older versions
    /// are upcast when decoded.
    public var schemaVersion: Int { type(of: payload).schemaVersion }

    /// The event's `data` as canonical JSON (RFC 8785), the bytes stored and hashed.
    public func canonicalData() throws -> [UInt8] {
        try payload.canonicalData()
    }
}

/// Why stored event data could not be read as a catalog event.
public enum EventDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No event type of that name in the catalog.
    case unknownType(String)
    /// A version below 1, above the current one (written by a newer build), or one with
    /// no upcaster path to the current version.
    case unsupportedSchemaVersion(type: String, version: Int)
    /// The data is not strict JSON, not an object, or does not fit the type's schema
    /// (a missing field, a wrong type, an unknown enum value, a malformed date).
    case invalidData(type: String, schemaVersion: Int, message: String)

    public var description: String {
        switch self {
        case .unknownType(let type):
            return "unknown event type \"\(type)\": not in the catalog"
        case .unsupportedSchemaVersion(let type, let version):
            let readable =
                EventRegistry.currentSchemaVersion(of: type).map { $0 == 1 ? "version 1" : "versions 1...\($0)" }
                ?? "no version"
            return "\(type) schema version \(version) is not supported: this build reads \(readable)"
        case .invalidData(let type, let schemaVersion, let message):
            return "invalid \(type) data (schema version \(schemaVersion)): \(message)"
        }
    }
}

/// The catalog's index: every event type, its current schema version, and how to read
/// stored data of any supported version.
public enum EventRegistry {
    private struct Entry: Sendable {
        let schemaVersion: Int
        let decode: @Sendable ([UInt8]) throws -> StrataEvent
    }

    private static func entry<E: DomainEvent>(
        _: E.Type, _ wrap: @escaping @Sendable (E) -> StrataEvent
    ) -> (String, Entry) {
        (E.eventType, Entry(schemaVersion: E.schemaVersion) { bytes in wrap(try CanonicalJSON.decode(E.self, from: bytes)) })
    }

    private static let entries: [String: Entry] = Dictionary(
        uniqueKeysWithValues: [
            entry(UserRegistered.self) { .userRegistered($0) },
            entry(AgentApproved.self) { .agentApproved($0) },
            entry(AgentRejected.self) { .agentRejected($0) },
            entry(ProfileUpdated.self) { .profileUpdated($0) },
            entry(AccountOpened.self) { .accountOpened($0) },
            entry(AccountUpdated.self) { .accountUpdated($0) },
            entry(AccountStatusChanged.self) { .accountStatusChanged($0) },
            entry(LoanRequested.self) { .loanRequested($0) },
            entry(LoanApproved.self) { .loanApproved($0) },
            entry(LoanRejected.self) { .loanRejected($0) },
            entry(PaymentReceived.self) { .paymentReceived($0) },
            entry(LoanClosed.self) { .loanClosed($0) },
            entry(CommissionEarned.self) { .commissionEarned($0) },
            entry(EarningsReserved.self) { .earningsReserved($0) },
            entry(EarningsReleased.self) { .earningsReleased($0) },
            entry(CashoutRequested.self) { .cashoutRequested($0) },
            entry(CashoutApproved.self) { .cashoutApproved($0) },
            entry(CashoutRejected.self) { .cashoutRejected($0) },
            entry(CommissionRateChanged.self) { .commissionRateChanged($0) },
            entry(InvoiceCreated.self) { .invoiceCreated($0) },
            entry(InvoicePaymentRecorded.self) { .invoicePaymentRecorded($0) },
            entry(InvoicePaid.self) { .invoicePaid($0) },
            entry(InvoiceCancelled.self) { .invoiceCancelled($0) },
            entry(InvoiceNumberAllocated.self) { .invoiceNumberAllocated($0) },
            entry(PersonalDataErased.self) { .personalDataErased($0) },
        ])

    /// Every event type name of the catalog, sorted.
    public static let eventTypes: [String] = entries.keys.sorted()

    /// The schema version this build writes for `type`, or nil for an unknown type.
    public static func currentSchemaVersion(of type: String) -> Int? {
        entries[type]?.schemaVersion
    }

    /// Reads stored event data of any supported schema version.
    ///
    /// The bytes must be strict JSON (`JSONParser`: no fractions, no duplicate keys) and an
    /// object. Older versions are upcast step by step (`Upcasters`) to the current version
    /// before decoding. Fields the schema does not know are ignored.
    public static func decode(
        type: String, schemaVersion: Int, data: some Collection<UInt8>
    ) throws(EventDecodingError) -> StrataEvent {
        guard let entry = entries[type] else { throw .unknownType(type) }
        guard (1...entry.schemaVersion).contains(schemaVersion) else {
            throw .unsupportedSchemaVersion(type: type, version: schemaVersion)
        }
        // Stored data of the current version is canonical: most of it reads without a parse tree.
        if schemaVersion == entry.schemaVersion, let event = CanonicalEventDecoder.decode(type: type, data: data) {
            return event
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(data)
        } catch {
            throw .invalidData(type: type, schemaVersion: schemaVersion, message: "not strict JSON: \(error)")
        }
        guard case .object = value else {
            throw .invalidData(type: type, schemaVersion: schemaVersion, message: "data is not a JSON object")
        }

        let bytes: [UInt8]
        if schemaVersion == entry.schemaVersion {
            bytes = Array(data)
        } else {
            var upcast = value
            for version in schemaVersion..<entry.schemaVersion {
                guard let upcaster = Upcasters.upcaster(type: type, fromVersion: version) else {
                    throw .unsupportedSchemaVersion(type: type, version: schemaVersion)
                }
                upcast = upcaster(upcast)
            }
            bytes = CanonicalJSON.bytes(upcast)
        }

        do {
            return try entry.decode(bytes)
        } catch {
            var message = describe(error)
            if schemaVersion != entry.schemaVersion { message += " (after upcasting to version \(entry.schemaVersion))" }
            throw .invalidData(type: type, schemaVersion: schemaVersion, message: message)
        }
    }

    /// A decoding failure in a few words, naming the field by its path (`lines[0].taxCents`).
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        switch error {
        case .typeMismatch(let expected, let context):
            return "\(path(context.codingPath)): expected \(expected)"
        case .valueNotFound(let expected, let context):
            return "\(path(context.codingPath)): expected \(expected), found null"
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return String(describing: error)
        }
    }

    private static func path(_ codingPath: [any CodingKey]) -> String {
        guard !codingPath.isEmpty else { return "data" }
        var text = ""
        for key in codingPath {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }
}
