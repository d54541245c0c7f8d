/// Lowercase hexadecimal, as the contract writes hashes and digests.
public enum Hex {
    public static func encode(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "" }
        // Written straight into the string's storage: appending digit by digit to an array
        // and decoding that into a String cost 1.7 k instructions for a 32-byte digest.
        return String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            bytes.withUnsafeBufferPointer { write($0, to: out.baseAddress!) }
            return bytes.count * 2
        }
    }

    /// Writes `bytes` in hex into `out`, which holds twice as many: for loops that reuse it.
    public static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
        precondition(out.count == bytes.count * 2, "hex takes two digits a byte")
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { write(input, to: $0.baseAddress!) }
        }
    }

    /// Two digits a byte from `start` on; the caller has made room for them.
    private static func write(_ bytes: UnsafeBufferPointer<UInt8>, to start: UnsafeMutablePointer<UInt8>) {
        var next = start
        for b in bytes {
            next[0] = digit(b >> 4)
            next[1] = digit(b & 0x0F)
            next += 2
        }
    }

    private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") - 10 + value
    }

    /// nil unless `text` is an even number of hex digits.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(utf8: $0) }
    }

    /// nil unless `utf8` is an even number of hex digits, either case. Read where the bytes
    /// are and written straight into the result: copying the text into an array first and
    /// appending byte by byte cost 1.8 k instructions for a 32-byte signature.
    public static func decode(utf8: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard utf8.count % 2 == 0 else { return nil }
        var valid = true
        let out = [UInt8](unsafeUninitializedCapacity: utf8.count / 2) { out, count in
            for i in 0..<utf8.count / 2 {
                guard let hi = value(utf8[2 * i]), let lo = value(utf8[2 * i + 1]) else {
                    valid = false
                    break
                }
                out[i] = hi << 4 | lo
                count = i + 1
            }
        }
        return valid ? out : nil
    }

    private static func value(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
