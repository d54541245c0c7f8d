import StrataCore

/// What the writer's log says of a wall clock behind the last recorded instant. The store
/// records no batch before that instant (docs/event-store.md "Recorded times"), so while the
/// clock is behind, every batch carries that one instant: a clock stepped back by a second
/// catches up unseen, but one that ran far ahead and was then set right would hold the
/// recorded times still for as long, and an operator must hear of it, once, and once more when
/// it is over.
struct ClockHold {
    /// Behind by more than this, it is said.
    static let toleratedMilliseconds: Int64 = 1000
    private var held = false

    /// The line to log after a batch decided with the clock `behind` milliseconds behind
    /// `instant`, the instant it was recorded at; nil when there is nothing new to say.
    mutating func note(behind: Int64, instant: Timestamp?) -> (warning: Bool, line: String)? {
        if !held, behind > Self.toleratedMilliseconds {
            held = true
            return (
                true,
                "the wall clock is \(behind) ms behind the last recorded instant "
                    + "\(instant.map { "\($0)" } ?? "?"): commands are recorded at that instant until the clock "
                    + "catches up, since recorded times never go back; check this machine's clock"
            )
        }
        if held, behind == 0 {
            held = false
            return (false, "the wall clock has caught up with the recorded instants")
        }
        return nil
    }
}
