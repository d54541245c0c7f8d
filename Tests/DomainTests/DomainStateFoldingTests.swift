import Domain
import Events
import StrataCore
import Testing

/// The shortcuts the command service's cache takes when it folds a stream: each must leave
/// the state exactly as folding every event of the stream would.
@Suite("Folding streams by shortcut")
struct DomainStateFoldingTests {
    private static let allocations = (1...5).map { n in
        StrataEvent.invoiceNumberAllocated(
            InvoiceNumberAllocated(series: "INV", sequence: Int64(n), invoiceNumber: "INV-\(n)", invoiceId: "I\(n)"))
    }
    private static let commissions = (1...3).map { n in
        StrataEvent.commissionEarned(
            CommissionEarned(
                agentId: "agent-7", loanId: "L1", paymentId: "P\(n)", interestCents: 1000, rateBp: 1000,
                commissionCents: Int64(n)))
    }

    @Test func aSeriesFoldedFromItsLastEventIsTheSeriesFoldedWhole() throws {
        var whole = DomainState()
        for event in Self.allocations { whole.apply(event) }
        var fromLast = DomainState()
        fromLast.apply(last: try #require(Self.allocations.last), ofStreamAt: 5)
        #expect(fromLast.series == whole.series)
        #expect(fromLast.version(of: .invoiceSeries("INV")) == 5)
        #expect(StreamRef.invoiceSeries("INV").isFoldedFromItsLastEvent)
        #expect(!StreamRef.agent("agent-7").isFoldedFromItsLastEvent)
    }

    @Test func aStreamTakenFromAnotherStateAndTheStreamsKeptAreAsFolded() {
        var whole = DomainState()
        for event in Self.commissions + Self.allocations { whole.apply(event) }
        var taken = DomainState()
        taken.take(.agent("agent-7"), from: whole)
        #expect(taken.earnings == whole.earnings)
        #expect(taken.version(of: .agent("agent-7")) == 3)
        #expect(taken.series.isEmpty && taken.version(of: .invoiceSeries("INV")) == 0)

        let kept = whole.keeping { if case .invoiceSeries = $0 { true } else { false } }
        #expect(kept.series == whole.series && kept.version(of: .invoiceSeries("INV")) == 5)
        #expect(kept.earnings.isEmpty && kept.version(of: .agent("agent-7")) == 0)
    }
}
