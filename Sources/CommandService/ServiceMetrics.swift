import Bus
import Domain
import StrataCore

/// The command service's metrics (`strata serve --metrics-file`), recorded into a shared
/// `MetricsRegistry`.
///
/// The writer thread counts a batch in a `BatchTally` of its own (no lock, no allocation per
/// command beyond a dictionary slot) and hands it over here once per batch: one lock a
/// commit, whatever the batch's size. The commands thread does the same with the refusals of
/// a burst of requests.
public final class ServiceMetrics: Sendable {
    public let registry: MetricsRegistry
    private let commands: MetricSet.Counter
    private let gateRefusals: MetricSet.Counter
    private let batchCommands: MetricSet.Histogram
    private let commitSeconds: MetricSet.Histogram
    private let batchSeconds: MetricSet.Histogram
    private let eventsAppended: MetricSet.Counter
    private let head: MetricSet.Gauge
    private let historyDropped: MetricSet.Counter
    private let historyAnswered: MetricSet.Counter
    private let historyHeld: MetricSet.Gauge
    private let commandsHeld: MetricSet.Gauge
    private let refusalsUnanswered: MetricSet.Counter
    private let cacheStreams: MetricSet.Gauge
    private let cacheBytes: MetricSet.Gauge
    private let streamsFolded: MetricSet.Counter

    /// Commands per group commit: up to the writer's batch limit (2,000 by default).
    public static let batchBuckets: [Double] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000]
    /// Seconds: a synchronous SQLite commit takes from well under a millisecond to seconds.
    public static let durationBuckets: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
    ]

    /// Declares the service's families on `registry`, after whatever it holds already.
    public init(registry: MetricsRegistry) {
        self.registry = registry
        (commands, gateRefusals, batchCommands, commitSeconds, batchSeconds, eventsAppended, head) = registry.update {
            metrics in
            (
                metrics.counter(
                    "strata_commands_total",
                    help: "Commands the writer answered, by command type (UnknownCommand for a type the domain "
                        + "does not know) and outcome: accepted, duplicate (answered from the journal), or the "
                        + "refusal's error code in lower case.",
                    labels: ["type", "outcome"]),
                metrics.counter(
                    "strata_requests_refused_total",
                    help: "Requests on the commands endpoint refused before the writer (framing, size, signature, "
                        + "clock window, scope; unavailable while stopping), by error code in lower case.",
                    labels: ["code"]),
                metrics.histogram(
                    "strata_batch_commands", help: "Commands decided and committed in one transaction (group commit).",
                    buckets: Self.batchBuckets),
                metrics.histogram(
                    "strata_commit_duration_seconds",
                    help: "Time of one batch's append transaction, durable on return (synchronous=FULL); a batch "
                        + "the store refused is not observed.",
                    buckets: Self.durationBuckets),
                metrics.histogram(
                    "strata_batch_duration_seconds",
                    help: "Time from taking a batch to its commit returning: deciding every command, then the commit.",
                    buckets: Self.durationBuckets),
                metrics.counter("strata_events_appended_total", help: "Events appended to the store by this process."),
                metrics.gauge("strata_head_position", help: "Position of the last event in the store.")
            )
        }
        historyDropped = registry.update { metrics in
            let counter = metrics.counter(
                "strata_history_replies_dropped_total",
                help: "History replies dropped, by reason: peer_full, the client had not read the 4 replies and "
                    + "the 1 MiB kept waiting for it (it pipelines and stopped reading); peer_gone, it disconnected.",
                labels: ["reason"])
            // Both series from the start, so that a rate over them needs no first drop.
            for reason in Self.droppedReasons { metrics.add(counter, 0, labels: [reason]) }
            return counter
        }
        historyAnswered = registry.update { metrics in
            metrics.counter(
                "strata_history_requests_total",
                help: "Requests on the history endpoint, by outcome: page (events sent, none included), or the "
                    + "refusal's error code in lower case (malformed, too_large, unauthenticated, forbidden, "
                    + "invalid, internal).",
                labels: ["outcome"])
        }
        historyHeld = registry.update { metrics in
            metrics.gauge(
                "strata_history_held_bytes",
                help: "Bytes of history replies handed to libzmq and not yet written to their connections: clients "
                    + "that stopped reading hold them. Past 64 MiB, pages shrink to 64 KiB.")
        }
        (commandsHeld, refusalsUnanswered) = registry.update { metrics in
            (
                metrics.gauge(
                    "strata_command_replies_held_bytes",
                    help: "Bytes of replies on the commands endpoint handed to libzmq and not yet written to their "
                        + "connections: clients that stopped reading hold them. Past 16 MiB, refusals at the gate "
                        + "go unanswered."),
                metrics.counter(
                    "strata_requests_unanswered_total",
                    help: "Requests on the commands endpoint refused before the writer and not answered, as 16 MiB "
                        + "of replies waited for clients that do not read (counted in strata_requests_refused_total "
                        + "too).")
            )
        }
        (cacheStreams, cacheBytes, streamsFolded) = registry.update { metrics in
            let families = Self.cacheFamilies(&metrics)
            // Every series from the start, so that a rate over the misses needs no first one.
            metrics.set(families.0, 0)
            metrics.set(families.1, 0)
            metrics.add(families.2, 0)
            return families
        }
    }

    static let droppedReasons = ["peer_full", "peer_gone"]

    /// The writer's cache of folded streams (`StateCache`): how full it is by either of its
    /// bounds, and how often it misses.
    private static func cacheFamilies(
        _ metrics: inout MetricSet
    ) -> (MetricSet.Gauge, MetricSet.Gauge, MetricSet.Counter) {
        (
            metrics.gauge(
                "strata_writer_cache_streams",
                help: "Streams the writer holds folded, after the last batch; at most 100,000 are kept between batches."),
            metrics.gauge(
                "strata_writer_cache_bytes",
                help: "The estimated size of the streams the writer holds folded, after the last batch; past 64 MiB "
                    + "they are dropped between batches and folded again as commands need them."),
            metrics.counter(
                "strata_writer_streams_folded_total",
                help: "Streams the writer read from the store to decide by, one for each stream its cache lacked.")
        )
    }

    /// The head when the service starts, before any batch.
    func started(head position: Int64) {
        registry.update { $0.set(head, Double(position)) }
    }

    /// One batch's counts, under one lock.
    func record(_ tally: BatchTally) {
        registry.update { metrics in
            for (key, count) in tally.commands {
                let type = Command.isKnownType(key.type) ? key.type : "UnknownCommand"
                metrics.add(commands, Double(count), labels: [type, key.outcome.label])
            }
            metrics.observe(batchCommands, Double(tally.commandCount))
            if let commit = tally.commitDuration { metrics.observe(commitSeconds, commit.seconds) }
            metrics.observe(batchSeconds, tally.batchDuration.seconds)
            metrics.add(eventsAppended, Double(tally.events))
            metrics.set(head, Double(tally.head))
            metrics.set(cacheStreams, Double(tally.cache.streams))
            metrics.set(cacheBytes, Double(tally.cache.bytes))
            metrics.add(streamsFolded, Double(tally.cache.folded - tally.reportedFolds))
        }
    }

    /// A history reply the ROUTER could not route; one lock a drop, which costs a page read.
    func droppedHistoryReply(_ routed: ZMQSocket.Routed) {
        let reason: String
        switch routed {
        case .sent: return
        case .peerFull: reason = Self.droppedReasons[0]
        case .peerGone: reason = Self.droppedReasons[1]
        }
        registry.update { $0.add(historyDropped, labels: [reason]) }
    }

    /// The bytes of history replies libzmq holds now (`HeldBytes`).
    func heldHistoryReplies(_ bytes: Int) {
        registry.update { $0.set(historyHeld, Double(bytes)) }
    }

    /// History requests answered, counted per burst of requests.
    func answeredHistory(_ counts: [HistoryOutcome: Int]) {
        guard !counts.isEmpty else { return }
        registry.update { metrics in
            for (outcome, count) in counts { metrics.add(historyAnswered, Double(count), labels: [outcome.label]) }
        }
    }

    /// Refusals the gate wrote (or UNAVAILABLE while stopping), counted per burst of requests,
    /// and how many of them were not sent (`CommandReplyHold`).
    func refusedAtGate(_ counts: [StrataError.Code: Int], unanswered: Int) {
        guard !counts.isEmpty else { return }
        registry.update { metrics in
            for (code, count) in counts {
                metrics.add(gateRefusals, Double(count), labels: [CommandOutcomeLabel.refused(code).label])
            }
            metrics.add(refusalsUnanswered, Double(unanswered))
        }
    }

    /// The bytes of command replies libzmq holds now (`HeldBytes`).
    func heldCommandReplies(_ bytes: Int) {
        registry.update { $0.set(commandsHeld, Double(bytes)) }
    }
}

/// How history answered a request, as `strata_history_requests_total` labels it.
enum HistoryOutcome: Hashable {
    case page
    case refused(StrataError.Code)

    var label: String {
        switch self {
        case .page: "page"
        case .refused(let code): CommandOutcomeLabel.refused(code).label
        }
    }
}

/// How the writer answered a command, as `strata_commands_total` labels it.
enum CommandOutcomeLabel: Hashable {
    case accepted
    case duplicate
    case refused(StrataError.Code)

    /// Literals, so labelling allocates nothing.
    var label: String {
        switch self {
        case .accepted: "accepted"
        case .duplicate: "duplicate"
        case .refused(let code):
            switch code {
            case .malformed: "malformed"
            case .unauthenticated: "unauthenticated"
            case .forbidden: "forbidden"
            case .invalid: "invalid"
            case .notFound: "not_found"
            case .conflict: "conflict"
            case .rejected: "rejected"
            case .tooLarge: "too_large"
            case .unavailable: "unavailable"
            case .internal: "internal"
            }
        }
    }
}

/// What the writer thread counts of one batch before handing it to `ServiceMetrics`. It
/// keeps one and empties it after each batch, so its dictionary's storage is reused.
struct BatchTally {
    struct Key: Hashable {
        /// As sent: mapped to UnknownCommand (bounding the label's values) once per batch.
        let type: String
        let outcome: CommandOutcomeLabel
    }

    var commands: [Key: Int] = [:]
    var commandCount = 0
    var events = 0
    var head: Int64 = 0
    /// nil when the store refused the batch: there was no commit to time.
    var commitDuration: Duration?
    var batchDuration: Duration = .zero
    /// The writer's cache after the batch, and the streams it had folded when the last batch was
    /// recorded (kept by `reset`).
    var cache = CommandWriter.CacheFootprint()
    var reportedFolds = 0

    mutating func reset() {
        commands.removeAll(keepingCapacity: true)
        commandCount = 0
        events = 0
    }
}

extension Duration {
    /// The duration in seconds, as metrics are measured.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
