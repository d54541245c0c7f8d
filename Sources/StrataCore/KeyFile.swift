/// The key file: which keys exist, their secrets, and what each may do.
///
/// `{"keys":[{"id":"svc-mobile","secret":"<64 hex>","scopes":["commands","history"],"roles":["AGENT"]}]}`
/// The file holds secrets, so it is written with mode 0600.
///
/// For the bus between hosts it may also hold CURVE keys (40 Z85 characters each): the
/// service's pair, `"curveServer":{"public":"…","secret":"…"}`, and per key a client pair,
/// `"curvePublic"` and `"curveSecret"`. With a server pair every endpoint is encrypted and
/// admits only the keys' `curvePublic`. A client's copy of the file holds the server's
/// public key only, and the service's copy needs no client's `curveSecret`.
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
        /// The CURVE public key the service admits this key's connections by.
        public let curvePublic: CurveKey?
        /// Its secret half, on the copy of the file the client itself uses.
        public let curveSecret: CurveKey?

        public init(
            id: String, secret: [UInt8], scopes: Set<Scope>, roles: [String]? = nil, curvePublic: CurveKey? = nil,
            curveSecret: CurveKey? = nil
        ) {
            self.id = id
            self.secret = secret
            self.scopes = scopes
            self.roles = roles
            self.curvePublic = curvePublic
            self.curveSecret = curveSecret
        }

        /// The key's CURVE pair, when this copy of the file holds both halves.
        public var curvePair: CurveKeyPair? {
            guard let curvePublic, let curveSecret else { return nil }
            return CurveKeyPair(publicKey: curvePublic, secretKey: curveSecret)
        }
    }

    public private(set) var keys: [Key]
    /// The service's CURVE public key: when present, the bus runs CURVE on every endpoint.
    public private(set) var curveServerPublic: CurveKey?
    /// Its secret half, on the service's own copy of the file only.
    public private(set) var curveServerSecret: CurveKey?

    public init(keys: [Key] = []) {
        self.keys = keys
    }

    public func key(_ id: String) -> Key? { keys.first { $0.id == id } }

    /// The service's CURVE pair, when this copy of the file holds both halves.
    public var curveServerPair: CurveKeyPair? {
        guard let curveServerPublic, let curveServerSecret else { return nil }
        return CurveKeyPair(publicKey: curveServerPublic, secretKey: curveServerSecret)
    }

    /// Sets the service's CURVE keys: a public key, and its secret unless this is a client's copy.
    public mutating func setCurveServer(publicKey: CurveKey, secretKey: CurveKey?) throws(KeyFileError) {
        if let secretKey, CurveKeyPair(publicKey: publicKey, secretKey: secretKey) == nil {
            throw KeyFileError("curveServer: \"public\" is not the public key of \"secret\"")
        }
        curveServerPublic = publicKey
        curveServerSecret = secretKey
    }

    /// The CURVE keys a client signing with `key` connects with: nil when the file has no
    /// server key (plain TCP); refused when it has one but `key` lacks a whole client pair,
    /// since the service would admit none of its connections.
    public func curveClientKeys(for key: Key) throws(KeyFileError) -> CurveClientKeys? {
        guard let serverKey = curveServerPublic else { return nil }
        guard let pair = key.curvePair else {
            throw KeyFileError(
                "key \(key.id) has no CURVE key pair (\"curvePublic\" and \"curveSecret\"), but the key file holds the "
                    + "service's CURVE key, so the service would refuse its connections")
        }
        return CurveClientKeys(serverKey: serverKey, client: pair)
    }

    /// Adds a key; refuses an id already present.
    public mutating func add(_ key: Key) throws(KeyFileError) {
        guard Identifier.isValid(key.id) else { throw KeyFileError("key id must be 1–64 characters of [A-Za-z0-9_-]: \(key.id)") }
        guard self.key(key.id) == nil else { throw KeyFileError("a key named \(key.id) exists already") }
        guard key.secret.count == 32 else { throw KeyFileError("a key's secret is 32 bytes") }
        guard !key.scopes.isEmpty else { throw KeyFileError("a key needs at least one scope") }
        if let curveSecret = key.curveSecret {
            guard let curvePublic = key.curvePublic else {
                throw KeyFileError("key \(key.id): \"curveSecret\" needs its \"curvePublic\"")
            }
            guard CurveKeyPair(publicKey: curvePublic, secretKey: curveSecret) != nil else {
                throw KeyFileError("key \(key.id): \"curvePublic\" is not the public key of \"curveSecret\"")
            }
        }
        if let curvePublic = key.curvePublic, let other = keys.first(where: { $0.curvePublic == curvePublic }) {
            throw KeyFileError("keys \(other.id) and \(key.id) have the same \"curvePublic\"")
        }
        keys.append(key)
    }

    /// Removes the key `id`; false when there is none.
    public mutating func remove(_ id: String) -> Bool {
        guard let index = keys.firstIndex(where: { $0.id == id }) else { return false }
        keys.remove(at: index)
        return true
    }

    /// Reads the file's JSON (past a byte order mark), refusing anything malformed or unknown
    /// with a message naming the problem.
    public init(json bytes: some Collection<UInt8>) throws(KeyFileError) {
        let document: JSONValue
        let mark = ByteOrderMark.length(at: bytes)
        do {
            document = try JSONParser.parse(bytes.dropFirst(mark))
        } catch {
            // The offset named stays the file's.
            throw KeyFileError(
                "the key file is not valid JSON: \(error.reason.rawValue) at byte \(error.offset + mark)")
        }
        guard let list = document["keys"]?.arrayValue else { throw KeyFileError("the key file needs a \"keys\" array") }
        try Self.refuseUnknownMembers(of: document, known: Self.fileMembers, in: nil)
        var file = KeyFile()
        if let server = document["curveServer"] {
            guard case .object = server,
                let publicKey = try Self.curveKey(server["public"], "curveServer", "public")
            else { throw KeyFileError("\"curveServer\" must be an object with a \"public\" key") }
            try Self.refuseUnknownMembers(of: server, known: Self.serverMembers, in: "curveServer")
            try file.setCurveServer(
                publicKey: publicKey, secretKey: try Self.curveKey(server["secret"], "curveServer", "secret"))
        }
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
            try Self.refuseUnknownMembers(of: entry, known: Self.keyMembers, in: "key \(id)")
            try file.add(
                Key(
                    id: id, secret: secret, scopes: scopes, roles: roles,
                    curvePublic: try Self.curveKey(entry["curvePublic"], "key \(id)", "curvePublic"),
                    curveSecret: try Self.curveKey(entry["curveSecret"], "key \(id)", "curveSecret")))
        }
        self = file
    }

    /// The members each object of the file may have: all that `json` writes, no more. Any other
    /// is refused rather than ignored: a misspelt `"role"` would leave its key acting for every
    /// role, and `keys new` would drop it when it rewrites the file.
    private static let fileMembers: Set<String> = ["curveServer", "keys"]
    private static let serverMembers: Set<String> = ["public", "secret"]
    private static let keyMembers: Set<String> = ["curvePublic", "curveSecret", "id", "roles", "scopes", "secret"]

    /// Refuses the first member of `object` (in sorted order) that is not one of `known`,
    /// naming it and `owner` (the key, or `curveServer`; nil for the file itself).
    private static func refuseUnknownMembers(
        of object: JSONValue, known: Set<String>, in owner: String?
    ) throws(KeyFileError) {
        guard let unknown = (object.objectValue ?? [:]).keys.sorted().first(where: { !known.contains($0) }) else {
            return
        }
        throw KeyFileError(
            (owner.map { "\($0): " } ?? "")
                + "unknown member '\(unknown)' (known: \(known.sorted().joined(separator: ", ")))")
    }

    /// A member holding a CURVE key as 40 Z85 characters; nil when the member is absent.
    private static func curveKey(
        _ value: JSONValue?, _ owner: String, _ member: String
    ) throws(KeyFileError) -> CurveKey? {
        guard let value else { return nil }
        guard let text = value.stringValue, let key = CurveKey(z85: text) else {
            throw KeyFileError(
                "\(owner): \"\(member)\" must be a CURVE key of 40 Z85 characters, as zmq_curve_keypair makes them")
        }
        return key
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
            if let curvePublic = key.curvePublic { members["curvePublic"] = .string(curvePublic.z85) }
            if let curveSecret = key.curveSecret { members["curveSecret"] = .string(curveSecret.z85) }
            return .object(members)
        }
        var document: [String: JSONValue] = ["keys": .array(entries)]
        if let curveServerPublic {
            var server: [String: JSONValue] = ["public": .string(curveServerPublic.z85)]
            if let curveServerSecret { server["secret"] = .string(curveServerSecret.z85) }
            document["curveServer"] = .object(server)
        }
        return CanonicalJSON.bytes(.object(document)) + [UInt8(ascii: "\n")]
    }
}

public struct KeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
