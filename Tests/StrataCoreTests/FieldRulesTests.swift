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
        "user@xn--bcher-kva.example", String(repeating: "l", count: 64) + "@example.com",
        // 254 bytes: 64 + "@" + 189.
        String(repeating: "l", count: 64) + "@" + String(repeating: "d", count: 185) + ".com",
    ])
    func validEmails(_ email: String) {
        #expect(FieldRules.isValidEmail(email))
    }

    @Test(arguments: [
        "", "a", "ab", "a@b", "@b.c", "a@", "a@@b.c", "a@b@c.d", "a b@c.d", " a@b.c", "a@b.c ", "a@b..c", "a@.b.c",
        "a@b.c.", "a@-b.c", "a@b-.c", "a@b.-c", "a\t@b.c", "a@b.c\u{7F}", "a@b.c\n", "a\u{0}@b.c", "plainaddress",
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
