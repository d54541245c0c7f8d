import StrataCore

extension CanonicalObjectWriter {
    /// Personal data as it is on the wire: one string, sealed or not.
    mutating func personalData(_ key: StaticString, _ value: PersonalData) {
        string(key, value.value)
    }

    mutating func optionalPersonalData(_ key: StaticString, _ value: PersonalData?) {
        optionalString(key, value?.value)
    }
}
