import StrataCore

extension CanonicalJSONReader {
    /// The member `key`, which must come next, as personal data (a plain string until sealed).
    mutating func personalData(_ key: StaticString) throws(GiveUp) -> PersonalData {
        PersonalData(try string(key))
    }

    mutating func optionalPersonalData(_ key: StaticString) throws(GiveUp) -> PersonalData? {
        try optionalString(key).map { PersonalData($0) }
    }
}
