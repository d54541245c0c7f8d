/// The key file: which keys exist, their secrets, and what each may do.
///
/// `{"keys":[{"id":"svc-mobile","secret":"<64 hex>","scopes":["commands","history"],"roles":["AGENT"]}]}`
/// The file holds secrets, so it is written with mode 0600.
public struct KeyFile: Sendable, Equatable {
    public enum Scope: String, Sendable, CaseIterable, Comparable {
        /// Post commands on the commands endpoint.
        case commands
        /// Read history on the history endpoint.
        case history
        /// Read personal data in clear.
        case personalData = "personal-data"

        public static func < (a: Scope, b: Scope) -> Bool { a.rawValue < b.rawValue }
    }

    public struct Key: Sendable, Equatable {
        public let id: String
        /// 32 raw bytes; the file holds them as 64 hex characters.
        public let secret: [UInt8]
        public let scopes: Set<Scope>
        /// When present, the key may act only for actors with one of these roles.
        public let roles: [String]?

        public init(id: String, secret: [UInt8], scopes: Set<Scope>, roles: [String]? = nil) {
            self.id = id
            self.secret = secret
            self.scopes = scopes
            self.roles = roles
        }
    }

    public private(set) var keys: [Key]

    public init(keys: [Key] = []) {
        self.keys = keys
    }

    public func key(_ id: String) -> Key? { keys.first { $0.id == id } }

    /// Adds a key; refuses an id already present.
    public mutating func add(_ key: Key) throws(KeyFileError) {
        guard Identifier.isValid(key.id) else { throw KeyFileError("key id must be 1–64 characters of [A-Za-z0-9_-]: \(key.id)") }
        guard self.key(key.id) == nil else { throw KeyFileError("a key named \(key.id) exists already") }
        guard key.secret.count == 32 else { throw KeyFileError("a key's secret is 32 bytes") }
        guard !key.scopes.isEmpty else { throw KeyFileError("a key needs at least one scope") }
        keys.append(key)
    }

    /// Reads the file's JSON, refusing anything malformed with a message naming the problem.
    public init(json bytes: some Collection<UInt8>) throws(KeyFileError) {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw KeyFileError("the key file is not valid JSON: \(error)")
        }
        guard let list = document["keys"]?.arrayValue else { throw KeyFileError("the key file needs a \"keys\" array") }
        var file = KeyFile()
        for (index, entry) in list.enumerated() {
            guard let id = entry["id"]?.stringValue else { throw KeyFileError("keys[\(index)] needs an \"id\" string") }
            guard let hex = entry["secret"]?.stringValue, hex.utf8.count == 64, let secret = Hex.decode(hex) else {
                throw KeyFileError("key \(id): \"secret\" must be 64 hex characters")
            }
            guard let scopeList = entry["scopes"]?.arrayValue else { throw KeyFileError("key \(id): needs a \"scopes\" array") }
            var scopes: Set<Scope> = []
            for item in scopeList {
                guard let name = item.stringValue, let scope = Scope(rawValue: name) else {
                    throw KeyFileError(
                        "key \(id): unknown scope \(item) (known: \(Scope.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                scopes.insert(scope)
            }
            var roles: [String]?
            if let roleList = entry["roles"] {
                guard let items = roleList.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
                    throw KeyFileError("key \(id): \"roles\" must be an array of strings")
                }
                roles = items.compactMap(\.stringValue)
            }
            try file.add(Key(id: id, secret: secret, scopes: scopes, roles: roles))
        }
        self = file
    }

    /// The file's JSON, canonical and newline-terminated.
    public var json: [UInt8] {
        let entries: [JSONValue] = keys.map { key in
            var members: [String: JSONValue] = [
                "id": .string(key.id),
                "secret": .string(Hex.encode(key.secret)),
                "scopes": .array(key.scopes.sorted().map { .string($0.rawValue) }),
            ]
            if let roles = key.roles { members["roles"] = .array(roles.map { .string($0) }) }
            return .object(members)
        }
        return CanonicalJSON.bytes(.object(["keys": .array(entries)])) + [UInt8(ascii: "\n")]
    }
}

public struct KeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
