import StrataCore

// The user and account events, and erasures, read from their canonical data, members in
// key order (see `CanonicalEventDecoder`).

extension UserRegistered {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let email = try r.personalData("email")
        let role = try r.enumeration("role", Role.self)
        let status = try r.enumeration("status", UserStatus.self)
        let userId = try r.string("userId")
        let username = try r.string("username")
        self.init(userId: userId, username: username, email: email, role: role, status: status)
    }
}

extension AgentApproved {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let agentId = try r.string("agentId")
        let approvedAt = try r.timestamp("approvedAt")
        let approvedBy = try r.string("approvedBy")
        self.init(agentId: agentId, approvedBy: approvedBy, approvedAt: approvedAt)
    }
}

extension AgentRejected {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let agentId = try r.string("agentId")
        let reason = try r.string("reason")
        let rejectedBy = try r.string("rejectedBy")
        self.init(agentId: agentId, rejectedBy: rejectedBy, reason: reason)
    }
}

extension ProfileUpdated {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let address = try r.optionalPersonalData("address")
        let dateOfBirth = try r.optionalPersonalData("dateOfBirth")
        let fullName = try r.optionalPersonalData("fullName")
        let phone = try r.optionalPersonalData("phone")
        let updatedBy = try r.string("updatedBy")
        let userId = try r.string("userId")
        self.init(
            userId: userId, fullName: fullName, phone: phone, address: address, dateOfBirth: dateOfBirth,
            updatedBy: updatedBy)
    }
}

extension AccountOpened {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let accountId = try r.string("accountId")
        let address = try r.personalData("address")
        let alternatePhone = try r.optionalPersonalData("alternatePhone")
        let assignedAgentId = try r.string("assignedAgentId")
        let email = try r.optionalPersonalData("email")
        let name = try r.personalData("name")
        let openedBy = try r.string("openedBy")
        let phone = try r.personalData("phone")
        let status = try r.enumeration("status", AccountStatus.self)
        self.init(
            accountId: accountId, name: name, phone: phone, email: email, alternatePhone: alternatePhone,
            address: address, assignedAgentId: assignedAgentId, openedBy: openedBy, status: status)
    }
}

extension AccountUpdated {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let accountId = try r.string("accountId")
        let address = try r.optionalPersonalData("address")
        let alternatePhone = try r.optionalPersonalData("alternatePhone")
        let assignedAgentId = try r.optionalString("assignedAgentId")
        let email = try r.optionalPersonalData("email")
        let name = try r.optionalPersonalData("name")
        let phone = try r.optionalPersonalData("phone")
        let updatedBy = try r.string("updatedBy")
        self.init(
            accountId: accountId, name: name, phone: phone, email: email, alternatePhone: alternatePhone,
            address: address, assignedAgentId: assignedAgentId, updatedBy: updatedBy)
    }
}

extension AccountStatusChanged {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let accountId = try r.string("accountId")
        let changedBy = try r.string("changedBy")
        let reason = try r.string("reason")
        let status = try r.enumeration("status", AccountStatus.self)
        self.init(accountId: accountId, status: status, reason: reason, changedBy: changedBy)
    }
}

extension PersonalDataErased {
    init(canonical r: inout CanonicalJSONReader) throws(CanonicalJSONReader.GiveUp) {
        let erasedBy = try r.string("erasedBy")
        let kind = try r.enumeration("kind", SubjectKind.self)
        let reason = try r.string("reason")
        let subjectId = try r.string("subjectId")
        self.init(subjectId: subjectId, kind: kind, erasedBy: erasedBy, reason: reason)
    }
}
