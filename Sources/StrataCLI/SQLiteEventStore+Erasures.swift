import EventStore
import Events

extension SQLiteEventStore {
    /// Every `PersonalDataErased` the store holds, in position order, with the event as recorded.
    /// One that cannot be read is `.corrupt`: an erasure left out would leave a key in place.
    func erasures() throws(StoreError) -> [(recorded: RecordedEvent, event: PersonalDataErased)] {
        var erasures: [(recorded: RecordedEvent, event: PersonalDataErased)] = []
        var after: Int64 = 0
        while true {
            let page = try events(after: after, limit: 10_000, filter: .types([PersonalDataErased.eventType]))
            guard let last = page.last else { return erasures }
            for recorded in page {
                guard case .personalDataErased(let event)? = try? recorded.decoded() else {
                    throw StoreError(.corrupt, "event \(recorded.position) (PersonalDataErased) cannot be read")
                }
                erasures.append((recorded, event))
            }
            after = last.position
        }
    }

    /// Those of `subjects` whose personal data an event at or before `position` carries: each
    /// subject's first such event is its UserRegistered, AccountOpened or InvoiceCreated.
    func subjects(
        among subjects: Set<DataSubject>, upTo position: Int64
    ) throws(StoreError) -> Set<DataSubject> {
        var found: Set<DataSubject> = []
        guard !subjects.isEmpty else { return found }
        let types = [UserRegistered.eventType, AccountOpened.eventType, InvoiceCreated.eventType]
        var after: Int64 = 0
        while after < position {
            let page = try events(after: after, limit: 10_000, filter: .types(types))
            guard let last = page.last else { break }
            for recorded in page where recorded.position <= position {
                guard let subject = try? recorded.decoded().personalDataSubject else {
                    throw StoreError(.corrupt, "event \(recorded.position) (\(recorded.type)) cannot be read")
                }
                if subjects.contains(subject) { found.insert(subject) }
            }
            after = last.position
        }
        return found
    }
}
