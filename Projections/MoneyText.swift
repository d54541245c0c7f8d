/// Money as people read it in audit summaries, notifications and the dashboard.
public enum MoneyText {
    /// Cents as units with thousands separators and two decimals, no currency:
    /// 1234550 → "12,345.50", -5 → "-0.05".
    public static func of(_ cents: Int64) -> String {
        // Written backwards into a stack buffer: every audit summary and notification has a
        // few of these, and building them from substrings was half of an audit.db rebuild.
        // The longest, Int64.min, is 26 bytes.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            var at = buffer.count
            func put(_ byte: UInt8) {
                at -= 1
                buffer[at] = byte
            }
            var units = cents.magnitude / 100
            let fraction = cents.magnitude % 100
            put(UInt8(ascii: "0") + UInt8(fraction % 10))
            put(UInt8(ascii: "0") + UInt8(fraction / 10))
            put(UInt8(ascii: "."))
            var digits = 0
            repeat {
                if digits > 0, digits % 3 == 0 { put(UInt8(ascii: ",")) }
                put(UInt8(ascii: "0") + UInt8(units % 10))
                units /= 10
                digits += 1
            } while units > 0
            if cents < 0 { put(UInt8(ascii: "-")) }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[at...]), as: UTF8.self)
        }
    }
}
