import StrataCore

// The user and account events, and erasures, write their own canonical data, members in key order (see
// `CanonicalObjectWriter`), mirroring their readers in `Events/Decoding`.

extension UserRegistered: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.personalData("email", email)
            o.enumeration("role", role)
            o.enumeration("status", status)
            o.string("userId", userId)
            o.string("username", username)
        }
    }
}

extension AgentApproved: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("agentId", agentId)
            o.timestamp("approvedAt", approvedAt)
            o.string("approvedBy", approvedBy)
        }
    }
}

extension AgentRejected: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("agentId", agentId)
            o.string("reason", reason)
            o.string("rejectedBy", rejectedBy)
        }
    }
}

extension ProfileUpdated: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.optionalPersonalData("address", address)
            o.optionalPersonalData("dateOfBirth", dateOfBirth)
            o.optionalPersonalData("fullName", fullName)
            o.optionalPersonalData("phone", phone)
            o.string("updatedBy", updatedBy)
            o.string("userId", userId)
        }
    }
}

extension AccountOpened: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("accountId", accountId)
            o.personalData("address", address)
            o.optionalPersonalData("alternatePhone", alternatePhone)
            o.string("assignedAgentId", assignedAgentId)
            o.optionalPersonalData("email", email)
            o.personalData("name", name)
            o.string("openedBy", openedBy)
            o.personalData("phone", phone)
            o.enumeration("status", status)
        }
    }
}

extension AccountUpdated: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("accountId", accountId)
            o.optionalPersonalData("address", address)
            o.optionalPersonalData("alternatePhone", alternatePhone)
            o.optionalString("assignedAgentId", assignedAgentId)
            o.optionalPersonalData("email", email)
            o.optionalPersonalData("name", name)
            o.optionalPersonalData("phone", phone)
            o.string("updatedBy", updatedBy)
        }
    }
}

extension AccountStatusChanged: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("accountId", accountId)
            o.string("changedBy", changedBy)
            o.string("reason", reason)
            o.enumeration("status", status)
        }
    }
}

extension PersonalDataErased: CanonicalJSONWritable {
    public func writeCanonicalJSON(to out: inout [UInt8]) throws(CanonicalJSONRefusal) {
        try CanonicalObjectWriter.write(to: &out) { o throws(CanonicalJSONRefusal) in
            o.string("erasedBy", erasedBy)
            o.enumeration("kind", kind)
            o.string("reason", reason)
            o.string("subjectId", subjectId)
        }
    }
}
