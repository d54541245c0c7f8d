/// An agent's commission on a loan payment: round(interestCents × rateBp / 10000), at
/// the rate in force (the agent's own, else the global default). Zero earns no event.
public enum Commission {
    public static func amount(interestCents: Int64, rateBp: Int) -> Int64 {
        Money.apply(rateBp: rateBp, to: interestCents)
    }
}
