import Events

/// Run-time settings (`settings-global`): commission rates.
public struct SettingsState: Sendable, Hashable {
    /// The global default set by an admin; nil until one is set (the configured default applies).
    public var defaultCommissionRateBp: Int?
    /// Rates set for single agents.
    public var agentCommissionRatesBp: [String: Int] = [:]

    public init() {}

    /// The rate in force for an agent: its own, else the global default.
    public func commissionRateBp(for agentId: String, configuredDefault: Int) -> Int {
        agentCommissionRatesBp[agentId] ?? defaultCommissionRateBp ?? configuredDefault
    }

    public static func evolve(_ state: SettingsState, _ event: StrataEvent) -> SettingsState {
        guard case .commissionRateChanged(let e) = event else { return state }
        var settings = state
        if let agent = e.agentId {
            settings.agentCommissionRatesBp[agent] = e.rateBp
        } else {
            settings.defaultCommissionRateBp = e.rateBp
        }
        return settings
    }
}
