import StrataCore
import Testing

@Suite("FieldRules")
struct FieldRulesTests {
    @Test(arguments: [
        "abc", "root", "a.b", "A_b-9", "first.last", "___", "...", String(repeating: "x", count: 32), "Agent-007",
    ])
    func validUsernames(_ username: String) {
        #expect(FieldRules.isValidUsername(username))
    }

    @Test(arguments: [
        "", "ab", String(repeating: "x", count: 33), "a b", "abc ", "a@b", "ab\n", "\u{E9}\u{E9}\u{E9}", "abc\u{301}",
        "a/bc", "a+bc", "ab:c", "ab\u{0}",
    ])
    func invalidUsernames(_ username: String) {
        #expect(!FieldRules.isValidUsername(username))
    }

    @Test(arguments: [
        "a@b.co", "a@b.c", "first.last+tag@example.com", "x@sub.example.org", "root@example.com", "o'brien@example.ie",
        "user@xn--bcher-kva.example", "jos\u{E9}@example.com", "jose\u{301}@example.com", "\u{7528}@\u{4F8B}.\u{5E7F}",
        "x@b\u{FC}cher.de", String(repeating: "l", count: 64) + "@example.com",
        // 254 bytes: 64 + "@" + 189.
        String(repeating: "l", count: 64) + "@" + String(repeating: "d", count: 185) + ".com",
    ])
    func validEmails(_ email: String) {
        #expect(FieldRules.isValidEmail(email))
    }

    @Test(arguments: [
        "", "a", "ab", "a@b", "@b.c", "a@", "a@@b.c", "a@b@c.d", "a b@c.d", " a@b.c", "a@b.c ", "a@b..c", "a@.b.c",
        "a@b.c.", "a@-b.c", "a@b-.c", "a@b.-c", "a\t@b.c", "a@b.c\u{7F}", "a@b.c\n", "a\u{0}@b.c", "plainaddress",
        // Spaces, controls and invisible format characters beyond ASCII.
        "a@b.c\u{A0}", "a\u{3000}@b.c", "a@b.c\u{2028}", "a\u{85}@b.c", "a@b.c\u{200B}", "a\u{200D}b@c.d",
        "a@b.c\u{FEFF}", "\u{202E}a@b.c", "a\u{2060}@b.c",
        String(repeating: "l", count: 65) + "@example.com",
        // 255 bytes: 64 + "@" + 190.
        String(repeating: "l", count: 64) + "@" + String(repeating: "d", count: 186) + ".com",
    ])
    func invalidEmails(_ email: String) {
        #expect(!FieldRules.isValidEmail(email))
    }

    @Test func lengthBoundariesAreWhatTheTestsSay() {
        #expect((String(repeating: "l", count: 64) + "@" + String(repeating: "d", count: 185) + ".com").utf8.count == 254)
        #expect((String(repeating: "l", count: 64) + "@" + String(repeating: "d", count: 186) + ".com").utf8.count == 255)
    }

    @Test func normalizedEmailIgnoresCase() {
        #expect(FieldRules.normalizedEmail("Root@Example.COM") == "root@example.com")
        #expect(FieldRules.normalizedEmail("Root@Example.COM") == FieldRules.normalizedEmail("ROOT@example.com"))
        #expect(FieldRules.normalizedEmail("a@b.c") != FieldRules.normalizedEmail("a@b.d"))
    }

    /// The digest uniqueness is checked on is made of the bytes: an accent typed as a combining
    /// mark must come out as the precomposed letter, byte for byte (`==` on strings would not tell).
    @Test func normalizedEmailIsInCanonicalComposition() {
        let precomposed = Array("jos\u{E9}@example.com".utf8)
        #expect(Array(FieldRules.normalizedEmail("Jose\u{301}@Example.com").utf8) == precomposed)
        #expect(Array(FieldRules.normalizedEmail("JOS\u{C9}@example.com").utf8) == precomposed)
        #expect(Array(FieldRules.normalizedEmail("JOSE\u{301}@EXAMPLE.COM").utf8) == precomposed)
        #expect(Array(FieldRules.normalizedEmail("Root@Example.COM").utf8) == Array("root@example.com".utf8))
    }

    @Test(arguments: [
        "+919812345678", "9812345678", "+91 98123 45678", "080-2345-6789", "(080) 2345 6789", "1234567",
        "+123456789012345",
    ])
    func validPhones(_ phone: String) {
        #expect(FieldRules.isValidPhone(phone))
    }

    @Test(arguments: [
        "", "123456", "+1234567890123456", "98123x45678", "++919812345678", "91+9812345678", " 9812345678",
        "-9812345678", "9812\n345678", "phone", String(repeating: "1", count: 10) + String(repeating: " ", count: 23),
    ])
    func invalidPhones(_ phone: String) {
        #expect(!FieldRules.isValidPhone(phone))
    }
}
