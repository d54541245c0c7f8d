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
}
