import Bus
import CommandService
import Foundation
import StrataCore
import StrataTesting
import Testing

/// An agent's earnings ledger through the real service across a restart: a payment appends
/// its commission to `agent-<id>` without reading that stream, and a cash-out decided after it
/// must still see everything the agent earned and reserved before.
@Suite struct EarningsLedgerTests {
    /// A loan of `principal` at 500 bp a month over two months, approved today, for the first
    /// account's agent.
    private func loan(_ id: String, principal: Int64, _ system: System) -> [CommandBody] {
        let workload = system.workload
        let today = workload.today.description
        return [
            CommandBody(
                id: "\(id)-request", type: "RequestLoan", actor: workload.agentId(0),
                payload: [
                    "loanId": .string(id), "accountId": .string(workload.accountId(0)),
                    "principalCents": .integer(principal), "monthlyRateBp": 500, "tenureMonths": 2,
                    "frequency": "MONTHLY", "requestedOn": .string(today),
                ]),
            CommandBody(
                id: "\(id)-approve", type: "ApproveLoan", actor: ServiceProcess.admin,
                payload: ["loanId": .string(id), "approvedOn": .string(today)]),
        ]
    }

    /// A payment of `amount` on loan `id` by the first agent, today.
    private func payment(_ id: String, loan: String, amount: Int64, _ system: System) -> CommandBody {
        CommandBody(
            id: id, type: "ReceivePayment", actor: system.workload.agentId(0),
            payload: [
                "paymentId": .string(id), "loanId": .string(loan), "amountCents": .integer(amount),
                "paidOn": .string(system.workload.today.description),
            ])
    }

    private func cashout(_ id: String, amount: Int64, _ system: System) -> CommandBody {
        let agent = system.workload.agentId(0)
        return CommandBody(
            id: id, type: "RequestCashout", actor: agent,
            payload: ["cashoutId": .string(id), "agentId": .string(agent), "amountCents": .integer(amount)])
    }

    @Test func aCashoutAfterARestartCountsWhatWasEarnedBeforeIt() throws {
        let system = try System("ledger")
        try system.send(system.workload.setup())
        // Interest of 5,000,000 on the first installment: 500,000 commission at the initial 10 %.
        try system.send(loan("ledger-loan-a", principal: 100_000_000, system))
        try system.send([payment("ledger-pay-a", loan: "ledger-loan-a", amount: 5_000_000, system)])
        try system.restartService()
        // After the restart, the first command to touch the ledger is a payment, which appends
        // 50,000 commission to it without reading it.
        try system.send(loan("ledger-loan-b", principal: 10_000_000, system))
        try system.send([payment("ledger-pay-b", loan: "ledger-loan-b", amount: 500_000, system)])

        let earned: Int64 = 550_000
        let replies = try System.exchange(
            [
                cashout("ledger-cashout-1", amount: earned - 10_000, system),
                cashout("ledger-cashout-2", amount: 10_000, system),
            ],
            endpoint: system.service.commands, secret: system.service.secret(of: ServiceProcess.Keys.service),
            context: system.context)
        for reply in replies {
            #expect(reply["ok"] == .bool(true), "everything earned is collectible: \(CanonicalJSON.string(reply))")
        }
        let over = try System.exchange(
            [cashout("ledger-cashout-3", amount: 10_000, system)], endpoint: system.service.commands,
            secret: system.service.secret(of: ServiceProcess.Keys.service), context: system.context)
        #expect(over.first?["error"]?["reason"]?.stringValue == "INSUFFICIENT_EARNINGS", "and no more")
    }
}
