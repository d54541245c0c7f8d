import StrataCore

/// Reads stored event data of the current schema version straight from its canonical
/// bytes, member by member in key order, without `JSONParser` or Foundation's decoder: the
/// fast path `EventRegistry.decode` takes first, since projecting an event used to cost
/// more in decoding than in writing its rows.
///
/// It returns nil whenever the data is not laid out as `CanonicalJSON` writes this schema
/// (a member it does not know, one missing, an escaped string, whitespace): the general
/// path then reads it and decides, errors and all. Values are read by the general path's
/// own rules (a timestamp by `Timestamp(_:)`, which also takes one without milliseconds). Whatever it does return is
/// what the general path returns for the same bytes (EventsTests check it against
/// Foundation's decoder on generated and mutated data).
public enum CanonicalEventDecoder {
    /// Reads the members of the data of `type`; nil for a type it does not read.
    private static func read(
        _ type: String, _ r: inout CanonicalJSONReader
    ) throws(CanonicalJSONReader.GiveUp) -> StrataEvent? {
        switch type {
        case UserRegistered.eventType: .userRegistered(try UserRegistered(canonical: &r))
        case AgentApproved.eventType: .agentApproved(try AgentApproved(canonical: &r))
        case AgentRejected.eventType: .agentRejected(try AgentRejected(canonical: &r))
        case ProfileUpdated.eventType: .profileUpdated(try ProfileUpdated(canonical: &r))
        case AccountOpened.eventType: .accountOpened(try AccountOpened(canonical: &r))
        case AccountUpdated.eventType: .accountUpdated(try AccountUpdated(canonical: &r))
        case AccountStatusChanged.eventType: .accountStatusChanged(try AccountStatusChanged(canonical: &r))
        case LoanRequested.eventType: .loanRequested(try LoanRequested(canonical: &r))
        case LoanApproved.eventType: .loanApproved(try LoanApproved(canonical: &r))
        case LoanRejected.eventType: .loanRejected(try LoanRejected(canonical: &r))
        case PaymentReceived.eventType: .paymentReceived(try PaymentReceived(canonical: &r))
        case LoanClosed.eventType: .loanClosed(try LoanClosed(canonical: &r))
        case CommissionEarned.eventType: .commissionEarned(try CommissionEarned(canonical: &r))
        case EarningsReserved.eventType: .earningsReserved(try EarningsReserved(canonical: &r))
        case EarningsReleased.eventType: .earningsReleased(try EarningsReleased(canonical: &r))
        case CashoutRequested.eventType: .cashoutRequested(try CashoutRequested(canonical: &r))
        case CashoutApproved.eventType: .cashoutApproved(try CashoutApproved(canonical: &r))
        case CashoutRejected.eventType: .cashoutRejected(try CashoutRejected(canonical: &r))
        case CommissionRateChanged.eventType: .commissionRateChanged(try CommissionRateChanged(canonical: &r))
        case InvoiceCreated.eventType: .invoiceCreated(try InvoiceCreated(canonical: &r))
        case InvoicePaymentRecorded.eventType: .invoicePaymentRecorded(try InvoicePaymentRecorded(canonical: &r))
        case InvoicePaid.eventType: .invoicePaid(try InvoicePaid(canonical: &r))
        case InvoiceCancelled.eventType: .invoiceCancelled(try InvoiceCancelled(canonical: &r))
        case InvoiceNumberAllocated.eventType: .invoiceNumberAllocated(try InvoiceNumberAllocated(canonical: &r))
        case PersonalDataErased.eventType: .personalDataErased(try PersonalDataErased(canonical: &r))
        default: nil
        }
    }

    /// The event whose current-version data `data` is, or nil when the general path must decide.
    public static func decode(type: String, data: some Collection<UInt8>) -> StrataEvent? {
        let event = CanonicalJSONReader.read(data) { reader throws(CanonicalJSONReader.GiveUp) in
            try reader.object { reader throws(CanonicalJSONReader.GiveUp) in try read(type, &reader) }
        }
        return event ?? nil
    }
}
