import Events
import Foundation
import StrataCore
import StrataTesting
import SubjectKeys
import Testing

private func withKeyStore<T>(_ body: (String) throws -> T) throws -> T {
    let directory = try ChildProcess.temporaryDirectory("strata-keys")
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(SubjectKeyStore.path(inDataDirectory: directory.path))
}

/// Every file of the key store (the database and its -wal and -shm), concatenated.
private func rawBytes(_ path: String) -> [UInt8] {
    ["", "-wal", "-shm"].flatMap { (try? Array(Data(contentsOf: URL(fileURLWithPath: path + $0)))) ?? [] }
}

private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}

@Suite("The key store")
struct SubjectKeyStoreTests {
    @Test func itIsCreatedReadableByItsOwnerOnly() throws {
        try withKeyStore { path throws in
            let store = try SubjectKeyStore(writingAt: path)
            try store.insert([SubjectKey.generate(for: DataSubject(.user, "U1"))], at: "2026-11-20T10:00:00.000Z")
            for file in [path, path + "-wal", path + "-shm"] {
                let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
                #expect(mode == 0o600, "\(file)")
            }
        }
    }

    @Test func keysAreFoundBySubjectAndById() throws {
        try withKeyStore { path throws in
            let store = try SubjectKeyStore(writingAt: path)
            let a1 = SubjectKey.generate(for: DataSubject(.account, "A1"))
            let p1 = SubjectKey.generate(for: DataSubject(.party, "P1"))
            try store.insert([a1, p1], at: "2026-11-20T10:00:00.000Z")
            #expect(try store.key(of: DataSubject(.account, "A1")) == a1)
            #expect(try store.key(of: DataSubject(.account, "A2")) == nil)
            #expect(try store.secret(ofKey: p1.id) == p1.secret)
            #expect(try store.subjects() == [DataSubject(.account, "A1"), DataSubject(.party, "P1")])
            // A reader sees what the writer committed.
            let reader = try SubjectKeyStore(readingAt: path)
            #expect(try reader.secret(ofKey: a1.id) == a1.secret)
        }
    }

    @Test func aSubjectsKeyIsNeverReplaced() throws {
        try withKeyStore { path throws in
            let store = try SubjectKeyStore(writingAt: path)
            let first = SubjectKey.generate(for: DataSubject(.account, "A1"))
            try store.insert([first], at: "2026-11-20T10:00:00.000Z")
            #expect(throws: SubjectKeyStoreError.self) {
                try store.insert([SubjectKey.generate(for: DataSubject(.account, "A1"))], at: "2026-11-20T10:00:01.000Z")
            }
            #expect(try store.key(of: DataSubject(.account, "A1")) == first)
        }
    }

    @Test func aDestroyedKeyLeavesNoCopyInTheFileOrItsLog() throws {
        try withKeyStore { path throws in
            let store = try SubjectKeyStore(writingAt: path)
            let doomed = SubjectKey.generate(for: DataSubject(.account, "A1"))
            let kept = SubjectKey.generate(for: DataSubject(.account, "A2"))
            try store.insert([doomed, kept], at: "2026-11-20T10:00:00.000Z")
            let reader = try SubjectKeyStore(readingAt: path)
            #expect(try reader.secret(ofKey: doomed.id) == doomed.secret)
            #expect(contains(rawBytes(path), doomed.secret))
            #expect(contains(rawBytes(path), Array(doomed.id.utf8)))

            #expect(try store.destroyKey(of: DataSubject(.account, "A1")))
            #expect(try store.destroyKey(of: DataSubject(.account, "A1")) == false)
            #expect(try reader.secret(ofKey: doomed.id) == nil)
            #expect(try reader.secret(ofKey: kept.id) == kept.secret)
            let bytes = rawBytes(path)
            #expect(!contains(bytes, doomed.secret))
            #expect(!contains(bytes, Array(doomed.id.utf8)))
            #expect(contains(bytes, kept.secret))
            let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int
            #expect(wal == 0)
        }
    }

    @Test func aReaderNeedsAnExistingKeyStore() throws {
        try withKeyStore { path throws in
            #expect(throws: SubjectKeyStoreError.self) { try SubjectKeyStore(readingAt: path) }
            try Data("not a database, not at all; long enough to look like a header......".utf8)
                .write(to: URL(fileURLWithPath: path))
            #expect(throws: SubjectKeyStoreError.self) { try SubjectKeyStore(readingAt: path) }
        }
    }

    @Test func theServiceSecretIsMadeOnceAndKept() throws {
        try withKeyStore { path throws in
            let store = try SubjectKeyStore(writingAt: path)
            let first = try store.serviceSecret(named: "email-digest")
            #expect(first.count == 32)
            #expect(try store.serviceSecret(named: "email-digest") == first)
            #expect(try SubjectKeyStore(writingAt: path).serviceSecret(named: "email-digest") == first)
        }
    }
}

@Suite("Sealing and opening through the key store")
struct SealerAndOpenerTests {
    @Test func newKeysAreStoredBeforeAnyReaderNeedsThem() throws {
        try withKeyStore { path throws in
            let sealer = try PersonalDataSealer(store: SubjectKeyStore(writingAt: path))
            let opened = StrataEvent.accountOpened(
                AccountOpened(
                    accountId: "A1", name: "Asha Rao", phone: "+919845012345", email: "asha@example.com",
                    address: "12 Market Road, Mysuru", assignedAgentId: "agent-1", openedBy: "agent-1", status: .active))
            let sealed = try sealer.seal(opened, stream: "account-A1")
            guard case .accountOpened(let e) = sealed else { Issue.record("not an AccountOpened"); return }
            for field in [e.name, e.phone, e.address, try #require(e.email)] { #expect(field.isSealed) }
            #expect(e.alternatePhone == nil)
            #expect(e.accountId == "A1" && e.assignedAgentId == "agent-1")
            // One key for the subject, held as new until stored.
            let keyIds = Set([e.name, e.phone, e.address].compactMap { PersonalDataCipher.parse($0).map { String($0.keyId) } })
            #expect(keyIds.count == 1)
            #expect(sealer.hasNewKeys)
            #expect(try SubjectKeyStore(readingAt: path).subjects() == [])
            try sealer.storeNewKeys(at: Timestamp("2026-11-20T10:00:00.000Z")!)
            #expect(!sealer.hasNewKeys)

            let opener = PersonalDataOpener(keyStorePath: path)
            #expect(try sealed.openingPersonalData(stream: "account-A1", with: opener) == opened)
            // Sealed again: the same key, fresh nonces.
            let again = try sealer.seal(opened, stream: "account-A1")
            #expect(!sealer.hasNewKeys)
            #expect(again != sealed)
            #expect(try again.openingPersonalData(stream: "account-A1", with: opener) == opened)
        }
    }

    @Test func discardedKeysAreMadeAgain() throws {
        try withKeyStore { path throws in
            let sealer = try PersonalDataSealer(store: SubjectKeyStore(writingAt: path))
            let event = StrataEvent.userRegistered(
                UserRegistered(userId: "U1", username: "u1", email: "u1@example.com", role: .agent, status: .pending))
            guard case .userRegistered(let first) = try sealer.seal(event, stream: "user-U1") else { return }
            sealer.discardNewKeys()
            guard case .userRegistered(let second) = try sealer.seal(event, stream: "user-U1") else { return }
            #expect(PersonalDataCipher.parse(first.email)?.keyId != PersonalDataCipher.parse(second.email)?.keyId)
        }
    }

    @Test func anErasedSubjectReadsAsErasedAndOthersStillOpen() throws {
        try withKeyStore { path throws in
            let sealer = try PersonalDataSealer(store: SubjectKeyStore(writingAt: path))
            let asha = StrataEvent.profileUpdated(
                ProfileUpdated(userId: "U1", fullName: "Asha Rao", phone: "+919845012345", updatedBy: "U1"))
            let ravi = StrataEvent.profileUpdated(ProfileUpdated(userId: "U2", fullName: "Ravi Kumar", updatedBy: "U2"))
            let sealedAsha = try sealer.seal(asha, stream: "user-U1")
            let sealedRavi = try sealer.seal(ravi, stream: "user-U2")
            try sealer.storeNewKeys(at: Timestamp("2026-11-20T10:00:00.000Z")!)
            let opener = PersonalDataOpener(keyStorePath: path)
            #expect(try sealedAsha.openingPersonalData(stream: "user-U1", with: opener) == asha)

            #expect(try sealer.destroyKey(of: DataSubject(.user, "U1")))
            opener.forget(DataSubject(.user, "U1"))
            #expect(
                try sealedAsha.openingPersonalData(stream: "user-U1", with: opener)
                    == .profileUpdated(ProfileUpdated(userId: "U1", fullName: .erased, phone: .erased, updatedBy: "U1")))
            #expect(try sealedRavi.openingPersonalData(stream: "user-U2", with: opener) == ravi)
            // A fresh reader, with nothing cached, reads the same.
            let fresh = PersonalDataOpener(keyStorePath: path)
            #expect(
                try sealedAsha.openingPersonalData(stream: "user-U1", with: fresh)
                    == .profileUpdated(ProfileUpdated(userId: "U1", fullName: .erased, phone: .erased, updatedBy: "U1")))
        }
    }

    @Test func aValueThatDoesNotOpenIsAnErrorNotErased() throws {
        try withKeyStore { path throws in
            let sealer = try PersonalDataSealer(store: SubjectKeyStore(writingAt: path))
            let event = StrataEvent.profileUpdated(ProfileUpdated(userId: "U1", fullName: "Asha Rao", updatedBy: "U1"))
            let sealed = try sealer.seal(event, stream: "user-U1")
            try sealer.storeNewKeys(at: Timestamp("2026-11-20T10:00:00.000Z")!)
            let opener = PersonalDataOpener(keyStorePath: path)
            // Copied into another user's stream.
            #expect(throws: PersonalDataError.self) { try sealed.openingPersonalData(stream: "user-U2", with: opener) }
            guard case .profileUpdated(var e) = sealed, let name = e.fullName else { return }
            var altered = Array(name.value.utf8)
            altered[altered.count - 3] = altered[altered.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            e.fullName = PersonalData(String(decoding: altered, as: UTF8.self))
            #expect(throws: PersonalDataError.self) {
                try StrataEvent.profileUpdated(e).openingPersonalData(stream: "user-U1", with: opener)
            }
        }
    }

    @Test func withoutAKeyStoreNothingSealedOpens() throws {
        try withKeyStore { path throws in
            let opener = PersonalDataOpener(keyStorePath: path)
            let clear = StrataEvent.profileUpdated(ProfileUpdated(userId: "U1", fullName: "Asha Rao", updatedBy: "U1"))
            // Clear values (a store written before sealing) need no key store.
            #expect(try clear.openingPersonalData(stream: "user-U1", with: opener) == clear)
            let key = SubjectKey.generate(for: DataSubject(.user, "U1"))
            let name = PersonalDataCipher.seal("Asha Rao", key: key, stream: "user-U1")
            let sealed = StrataEvent.profileUpdated(ProfileUpdated(userId: "U1", fullName: name, updatedBy: "U1"))
            #expect(throws: PersonalDataError.self) { try sealed.openingPersonalData(stream: "user-U1", with: opener) }
        }
    }

    @Test func emailDigestsAreKeyed() {
        let one = EmailDigest(secret: Array(repeating: 1, count: 32))
        let two = EmailDigest(secret: Array(repeating: 2, count: 32))
        #expect(one.key("asha@example.com") == one.key("asha@example.com"))
        #expect(one.key("asha@example.com").count == 32)
        #expect(one.key("asha@example.com") != one.key("ravi@example.com"))
        #expect(one.key("asha@example.com") != two.key("asha@example.com"))
    }
}
