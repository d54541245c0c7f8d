/// Money as people read it in audit summaries, notifications and the dashboard.
public enum MoneyText {
    /// Cents as units with thousands separators and two decimals, no currency:
    /// 1234550 → "12,345.50", -5 → "-0.05".
    public static func of(_ cents: Int64) -> String {
        let magnitude = cents.magnitude
        var whole = String(magnitude / 100)
        var grouped = ""
        while whole.count > 3 {
            grouped = "," + whole.suffix(3) + grouped
            whole.removeLast(3)
        }
        let fraction = magnitude % 100
        return (cents < 0 ? "-" : "") + whole + grouped + "." + (fraction < 10 ? "0" : "") + String(fraction)
    }
}
