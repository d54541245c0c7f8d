// Which fields of the catalog are personal data, and whose: the one place that says so, for
// sealing in the command service and opening in every reader.

extension StrataEvent {
    /// The data subject whose personal data this event carries; nil for the event types that
    /// carry none. Each event carries the personal data of at most one subject.
    public var personalDataSubject: DataSubject? {
        switch self {
        case .userRegistered(let e): DataSubject(.user, e.userId)
        case .profileUpdated(let e): DataSubject(.user, e.userId)
        case .accountOpened(let e): DataSubject(.account, e.accountId)
        case .accountUpdated(let e): DataSubject(.account, e.accountId)
        case .invoiceCreated(let e): DataSubject(.party, e.customer.partyId)
        default: nil
        }
    }

    /// The event with each personal field that is present replaced by what `transform`
    /// makes of it, in the order the fields are declared.
    public func mappingPersonalData<Failure: Error>(
        _ transform: (PersonalData) throws(Failure) -> PersonalData
    ) throws(Failure) -> StrataEvent {
        func map(_ value: PersonalData?) throws(Failure) -> PersonalData? {
            guard let value else { return nil }
            return try transform(value)
        }
        switch self {
        case .userRegistered(var e):
            e.email = try transform(e.email)
            return .userRegistered(e)
        case .profileUpdated(var e):
            e.fullName = try map(e.fullName)
            e.phone = try map(e.phone)
            e.address = try map(e.address)
            e.dateOfBirth = try map(e.dateOfBirth)
            return .profileUpdated(e)
        case .accountOpened(var e):
            e.name = try transform(e.name)
            e.phone = try transform(e.phone)
            e.email = try map(e.email)
            e.alternatePhone = try map(e.alternatePhone)
            e.address = try transform(e.address)
            return .accountOpened(e)
        case .accountUpdated(var e):
            e.name = try map(e.name)
            e.phone = try map(e.phone)
            e.email = try map(e.email)
            e.alternatePhone = try map(e.alternatePhone)
            e.address = try map(e.address)
            return .accountUpdated(e)
        case .invoiceCreated(var e):
            e.customer.name = try transform(e.customer.name)
            e.customer.taxId = try map(e.customer.taxId)
            return .invoiceCreated(e)
        default:
            return self
        }
    }

    /// The event as readers see it: every sealed field of an event of `stream` opened by
    /// `opener` (clear text, or `[erased]`); clear fields, from a store written before
    /// sealing, as they are.
    public func openingPersonalData(
        stream: String, with opener: any PersonalDataOpening
    ) throws(PersonalDataError) -> StrataEvent {
        guard personalDataSubject != nil else { return self }
        return try mappingPersonalData { value throws(PersonalDataError) in
            value.isSealed ? try opener.open(value, stream: stream) : value
        }
    }
}
