/// Why a projector reads history up to the head: `text` for the line that says so, which names
/// the position; `kind` for the lines that gather many catch-ups of one kind (`CatchUpLines`).
struct CatchUpReason: Equatable {
    let text: String
    let kind: String

    private init(_ text: String, kind: String? = nil) {
        self.text = text
        self.kind = kind ?? text
    }

    static let onStart = CatchUpReason("on start")
    static let fileOpenedAgain = CatchUpReason("as the file was opened again")
    static let quietBus = CatchUpReason("after a quiet bus")
    static let diskWasFull = CatchUpReason("after the disk was full")

    static func notTheApplied(_ position: Int64) -> CatchUpReason {
        CatchUpReason(
            "as position \(position) on the bus is not the event the file applied",
            kind: "as an event on the bus was not the one the file applied")
    }

    static func gap(at position: Int64) -> CatchUpReason {
        CatchUpReason("after a gap at position \(position) (the bus dropped events)", kind: "after a gap")
    }

    static func offTheChain(_ position: Int64) -> CatchUpReason {
        CatchUpReason(
            "as position \(position) does not follow the file's chain",
            kind: "as an event did not follow the file's chain")
    }

    static func personalData(_ position: Int64) -> CatchUpReason {
        CatchUpReason("to open the personal data of position \(position)", kind: "to open personal data")
    }

    static func heartbeatAhead(_ head: Int64) -> CatchUpReason {
        CatchUpReason("as the heartbeat's head \(head) is ahead", kind: "as a heartbeat's head was ahead")
    }

    static func heartbeatBehind(_ head: Int64) -> CatchUpReason {
        CatchUpReason(
            "to check the heartbeat's head \(head), behind the checkpoint",
            kind: "to check a heartbeat's head behind the checkpoint")
    }
}
