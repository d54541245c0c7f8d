import StrataCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A test that pins a date to the very edge of what the service accepts as of its today (the
/// earliest `--today` the demo allows, the first day after today) fails if UTC midnight passes
/// while it runs: the service's today moves and the edge with it. Such a test calls this first;
/// it returns at once unless midnight is less than `seconds` away, and then returns just after
/// it.
public func waitUnlessTheUTCDayLasts(seconds: Int64) {
    let wait = millisecondsToWait(untilTheUTCDayLasts: seconds, now: Timestamp.now())
    if wait > 0 { usleep(useconds_t(wait * 1000)) }
}

/// How long `waitUnlessTheUTCDayLasts` waits at `now`: nothing while the day has `seconds` left,
/// else until a second past midnight, so that every clock read afterwards is in the new day.
public func millisecondsToWait(untilTheUTCDayLasts seconds: Int64, now: Timestamp) -> Int64 {
    let millisecondsADay: Int64 = 86_400_000
    let left = millisecondsADay - now.millisecondsSinceEpoch % millisecondsADay
    return left < seconds * 1000 ? left + 1000 : 0
}
