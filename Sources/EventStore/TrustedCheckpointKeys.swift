import StrataCore

/// The public keys a store's checkpoints may be signed with, oldest first: one, or, once a key
/// was replaced (`strata keys checkpoint --rotate`, after the secret key was lost or to retire
/// it), every earlier one before the key in force. `checkpoint.pub` holds them a line each.
///
/// A key signs only until the next one takes over: a checkpoint signed by an earlier key after
/// one signed by a later key is not trusted. So a replaced key, should its secret turn up in the
/// wrong hands, cannot sign anything past the point where its successor began; and rewriting the
/// history before that point breaks the chain at the successor's first signed position.
public struct TrustedCheckpointKeys: Sendable, Equatable {
    /// Never empty; the last is the key in force.
    public let keys: [[UInt8]]

    public init(_ key: [UInt8]) {
        keys = [key]
    }

    /// Nil for no keys, or the same key twice (its place in the order would be two places).
    public init?(keys: [[UInt8]]) {
        guard !keys.isEmpty, Set(keys).count == keys.count else { return nil }
        self.keys = keys
    }

    /// Reads `checkpoint.pub`'s text: a public key of 64 hex characters a line, oldest first,
    /// blank lines and a byte order mark aside. Nil when any line is not a key.
    public init?(text: String) {
        var keys: [[UInt8]] = []
        for line in ByteOrderMark.removed(from: text).split(whereSeparator: \.isNewline) {
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            guard let key = CheckpointKey.publicKey(fromText: String(line)) else { return nil }
            keys.append(key)
        }
        self.init(keys: keys)
    }

    /// The key in force: the one `serve` must sign with.
    public var current: [UInt8] { keys[keys.count - 1] }

    /// The keys one a line, as `checkpoint.pub` holds them.
    public var text: String { keys.map { Hex.encode($0) + "\n" }.joined() }

    /// Where `key` stands in the order, nil when it is not trusted.
    public func rank(of key: [UInt8]) -> Int? {
        keys.firstIndex(of: key)
    }

    /// The same keys with `key` after them, in force.
    public func replaced(by key: [UInt8]) -> TrustedCheckpointKeys? {
        TrustedCheckpointKeys(keys: keys + [key])
    }
}
