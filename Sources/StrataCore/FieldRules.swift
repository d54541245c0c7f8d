import Foundation

/// Format rules for fields that several places check (the operator bootstrap and the
/// deciders), so that both refuse exactly the same values.
public enum FieldRules {
    /// 3–32 characters of `[A-Za-z0-9._-]`.
    public static func isValidUsername(_ username: String) -> Bool {
        let utf8 = username.utf8
        return (3...32).contains(utf8.count)
            && utf8.allSatisfy { b in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || b == UInt8(ascii: "_")
                    || b == UInt8(ascii: "-") || b == UInt8(ascii: ".")
            }
    }

    /// A pragmatic address check: `local@domain.tld`, at most 254 bytes, no spaces or
    /// control characters, one `@`, a dot in the domain with no empty labels.
    ///
    /// Spaces and controls are judged over all of Unicode, with the invisible format characters
    /// (zero-width spaces and joiners, direction marks): an address ending in a no-break space,
    /// or holding a zero-width one, prints as another address does while it is taken as a
    /// different one.
    public static func isValidEmail(_ email: String) -> Bool {
        let utf8 = Array(email.utf8)
        guard (3...254).contains(utf8.count), !utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { return false }
        if utf8.contains(where: { $0 >= 0x80 }), email.unicodeScalars.contains(where: isInvisibleInEmail) {
            return false
        }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64 else { return false }
        let labels = parts[1].split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && labels.allSatisfy { !$0.isEmpty && !$0.hasPrefix("-") && !$0.hasSuffix("-") }
    }

    /// A phone number as people write it: an optional leading `+`, then 7–15 digits, with
    /// spaces, hyphens and parentheses allowed between them; at most 32 characters.
    public static func isValidPhone(_ phone: String) -> Bool {
        let utf8 = Array(phone.utf8)
        guard (7...32).contains(utf8.count) else { return false }
        var digits = 0
        for (index, b) in utf8.enumerated() {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "+") where index == 0: continue
            case UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "("), UInt8(ascii: ")"):
                guard digits > 0 || b == UInt8(ascii: "(") else { return false }
            default: return false
            }
        }
        return (7...15).contains(digits)
    }

    /// Unicode spaces, controls and format characters.
    private static func isInvisibleInEmail(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator: true
        default: scalar.properties.isWhitespace
        }
    }

    /// The key under which uniqueness of an email is checked: case-insensitive, and in Unicode
    /// canonical composition (NFC), so that `é` typed as one character or as `e` and a combining
    /// accent is one address. Swift's `==` already takes both as equal, but the keyed digest the
    /// command service checks uniqueness on is made of the bytes, which differ.
    public static func normalizedEmail(_ email: String) -> String {
        let lowercased = email.lowercased()
        guard lowercased.utf8.contains(where: { $0 >= 0x80 }) else { return lowercased }
        return lowercased.precomposedStringWithCanonicalMapping
    }
}
