#!/usr/bin/env python3
"""The read models analysts query, computed a second way from the events alone.

Run by Tests/ServiceTests/IndependentReadModelTests.swift. Standard library only; this folder
is not a SwiftPM target, and nothing here is shared with the projections.

    strata replay --data DIR | read_models.py --strata BIN --data DIR --date YYYY-MM-DD

stdin:  the history as `strata replay` prints it, one event a line (the stored JSON, personal
        data sealed). Replay is the documented export: it reads events.db as it stands, and
        gives each event's position and recordedAt, which several columns are.
Then it asks `strata query NAME --format json` for each query below (aging on --date, waiting
with --min-position for the last event read; with --as-of, the read models as of that event,
so a history cut short with `replay --to P` checks time travel) and compares every row, keyed by the query's
primary key, column by column, with what it computed from docs/read-models.md and DOMAIN.md.

stdout: one line per difference, then one JSON line
        {"ok":…,"queries":{NAME:rows},"values":N,"differences":N,"uncovered":{NAME:[columns]}};
exit 0 when nothing differs, 1 otherwise, 2 for a query that could not run.

Personal columns are sealed in the events, so they are only checked for what the events do
say: `[erased]` once the subject was erased, opened (not the sealed form) before.
"""

import argparse
import datetime
import json
import subprocess
import sys
from decimal import ROUND_HALF_UP, Decimal

ERASED = "[erased]"
SEALED_PREFIX = "pd1."


def day_of(instant):
    return instant[:10]


def days_between(later, earlier):
    return (datetime.date.fromisoformat(later) - datetime.date.fromisoformat(earlier)).days


def round_half_away(numerator, denominator):
    """numerator / denominator rounded half away from zero, in exact integers."""
    quotient = Decimal(numerator) / Decimal(denominator)
    return int(quotient.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def money(cents):
    """12,345.67 as notifications write amounts."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return "%s%s.%02d" % (sign, format(whole, ","), part)


# docs/audit-log.md: each event type's action in the audit log.
AUDIT_ACTIONS = {
    "UserRegistered": "REGISTER_USER", "AgentApproved": "APPROVE_AGENT", "AgentRejected": "REJECT_AGENT",
    "ProfileUpdated": "UPDATE_PROFILE", "AccountOpened": "CREATE_ACCOUNT", "AccountUpdated": "UPDATE_ACCOUNT",
    "AccountStatusChanged": "CHANGE_ACCOUNT_STATUS", "LoanRequested": "CREATE_LOAN", "LoanApproved": "APPROVE_LOAN",
    "LoanRejected": "REJECT_LOAN", "PaymentReceived": "RECEIVE_PAYMENT", "LoanClosed": "CLOSE_LOAN",
    "CommissionEarned": "EARN_COMMISSION", "EarningsReserved": "RESERVE_EARNINGS",
    "EarningsReleased": "RELEASE_EARNINGS", "CashoutRequested": "CASHOUT_REQUEST",
    "CashoutApproved": "CASHOUT_APPROVED", "CashoutRejected": "CASHOUT_REJECTED",
    "CommissionRateChanged": "UPDATE_COMMISSION", "InvoiceNumberAllocated": "ALLOCATE_INVOICE_NUMBER",
    "InvoiceCreated": "CREATE_INVOICE", "InvoicePaymentRecorded": "RECORD_INVOICE_PAYMENT",
    "InvoicePaid": "INVOICE_PAID", "InvoiceCancelled": "CANCEL_INVOICE", "PersonalDataErased": "ERASE_PERSONAL_DATA",
}


class History:
    """Everything the read models say, folded from the events in order."""

    def __init__(self):
        self.users = {}
        self.accounts = {}
        self.loans = {}
        self.installments = {}  # (loan_id, number) -> row
        self.payments = {}  # (loan_id, payment_id) -> row
        self.agents = {}  # agent_id -> earnings counters
        self.rates = {}  # agent_id or "*" -> rate_bp
        self.cashouts = {}
        self.invoices = {}
        self.invoice_payments = []  # (invoice_id, paid_on, amount)
        self.collections = {}
        self.collections_by_agent = {}
        self.notifications = {}  # (user_id, position) -> row
        self.erased = set()  # (kind, subject id)
        self.audit = {}  # position -> audit_log row
        self.problems = []  # events that contradict themselves
        self.commissions_due = {}  # (loan_id, payment_id) -> commission a payment's interest earns
        self.last_position = 0

    def agent(self, agent_id):
        return self.agents.setdefault(agent_id, {
            "loans_count": 0, "loans_released": 0, "loans_released_cents": 0, "payments_count": 0,
            "collected_cents": 0, "earned_cents": 0, "pending_cents": 0, "cashed_out_cents": 0,
        })

    def notify(self, event, user_id, kind, entity_id, message):
        position = event["position"]
        self.notifications[(user_id, position)] = {
            "user_id": user_id, "position": position, "kind": kind, "entity_id": entity_id,
            "message": message, "created_at": event["recordedAt"],
        }

    def apply(self, event):
        self.last_position = event["position"]
        self.audit[(event["position"],)] = {
            "position": event["position"], "recorded_at": event["recordedAt"], "actor": event["metadata"]["actor"],
            "action": AUDIT_ACTIONS.get(event["type"], "?"), "entity": event["stream"], "event_type": event["type"],
            "command_id": event["metadata"]["commandId"],
        }
        handler = getattr(self, "on_" + event["type"], None)
        if handler:
            handler(event, event["data"])

    # Users

    def on_UserRegistered(self, event, data):
        self.users[data["userId"]] = {
            "user_id": data["userId"], "username": data["username"], "role": data["role"],
            "status": "PENDING" if data["role"] == "AGENT" else "APPROVED",
            "registered_at": event["recordedAt"], "registered_by": event["metadata"]["actor"],
            "decided_by": None, "decided_at": None,
        }

    def on_AgentApproved(self, event, data):
        user = self.users[data["agentId"]]
        user.update(status="APPROVED", decided_by=data["approvedBy"], decided_at=data["approvedAt"])
        self.agent(data["agentId"])
        self.notify(event, data["agentId"], "AGENT_APPROVED", data["agentId"],
                    "Your agent registration was approved by %s." % data["approvedBy"])

    def on_AgentRejected(self, event, data):
        user = self.users[data["agentId"]]
        user.update(status="REJECTED", decided_by=data["rejectedBy"], decided_at=event["recordedAt"])
        self.notify(event, data["agentId"], "AGENT_REJECTED", data["agentId"],
                    "Your agent registration was rejected by %s: %s" % (data["rejectedBy"], data["reason"]))

    # Accounts

    def on_AccountOpened(self, event, data):
        self.accounts[data["accountId"]] = {
            "account_id": data["accountId"], "agent_id": data["assignedAgentId"], "status": "ACTIVE",
            "opened_at": event["recordedAt"], "loans_count": 0, "active_loans": 0,
            "has_email": "email" in data,
        }
        self.notify(event, data["assignedAgentId"], "ACCOUNT_CREATED", data["accountId"],
                    "Account %s was opened by %s and assigned to you." % (data["accountId"], data["openedBy"]))

    def on_AccountUpdated(self, event, data):
        account = self.accounts[data["accountId"]]
        account["agent_id"] = data.get("assignedAgentId", account["agent_id"])
        account["has_email"] = account["has_email"] or "email" in data

    def on_AccountStatusChanged(self, event, data):
        self.accounts[data["accountId"]]["status"] = data["status"]

    # Loans

    def on_LoanRequested(self, event, data):
        loan_id, agent_id = data["loanId"], data["agentId"]
        self.loans[loan_id] = {
            "loan_id": loan_id, "account_id": data["accountId"], "agent_id": agent_id,
            "status": "PENDING_APPROVAL", "principal_cents": data["principalCents"],
            "monthly_rate_bp": data["monthlyRateBp"], "tenure_months": data["tenureMonths"],
            "frequency": data["frequency"], "interest_method": data.get("interestMethod", "REDUCING"),
            "requested_on": data.get("requestedOn", day_of(event["recordedAt"])),
            "requested_by": data["requestedBy"], "requested_at": event["recordedAt"],
            "approved_on": None, "closed_on": None, "total_due_cents": 0, "total_paid_cents": 0,
            "penalty_accrued_cents": 0, "installments": [],
        }
        self.accounts[data["accountId"]]["loans_count"] += 1
        self.agent(agent_id)["loans_count"] += 1

    def on_LoanApproved(self, event, data):
        loan = self.loans[data["loanId"]]
        loan.update(status="ACTIVE", approved_on=data["approvedOn"])
        for entry in data["schedule"]:
            if entry["totalCents"] != entry["principalCents"] + entry["interestCents"]:
                self.problems.append("position %d: installment %d total is not principal + interest"
                                     % (event["position"], entry["number"]))
            row = {
                "loan_id": loan["loan_id"], "number": entry["number"], "due_date": entry["dueDate"],
                "accrued_on": None,
                "principal_cents": entry["principalCents"], "interest_cents": entry["interestCents"],
                "total_cents": entry["principalCents"] + entry["interestCents"],
                "principal_paid_cents": 0, "interest_paid_cents": 0, "penalty_accrued_cents": 0,
                "penalty_paid_cents": 0, "status": "UNPAID", "paid_on": None,
            }
            self.installments[(loan["loan_id"], entry["number"])] = row
            loan["installments"].append(row)
        loan["total_due_cents"] = sum(row["total_cents"] for row in loan["installments"])
        self.accounts[loan["account_id"]]["active_loans"] += 1
        earnings = self.agent(loan["agent_id"])
        earnings["loans_released"] += 1
        earnings["loans_released_cents"] += loan["principal_cents"]
        first = loan["installments"][0]["due_date"] if loan["installments"] else None
        self.notify(event, loan["agent_id"], "LOAN_APPROVED", loan["loan_id"],
                    "Loan %s on account %s was approved by %s on %s: %s released, %d installments, the first due %s."
                    % (loan["loan_id"], loan["account_id"], data["approvedBy"], data["approvedOn"],
                       money(loan["principal_cents"]), len(loan["installments"]), first))

    def on_LoanRejected(self, event, data):
        loan = self.loans[data["loanId"]]
        loan["status"] = "REJECTED"
        self.notify(event, loan["agent_id"], "LOAN_REJECTED", loan["loan_id"],
                    "Loan %s on account %s (%s) was rejected by %s: %s"
                    % (loan["loan_id"], loan["account_id"], money(loan["principal_cents"]),
                       data["rejectedBy"], data["reason"]))

    def on_PaymentReceived(self, event, data):
        loan = self.loans[data["loanId"]]
        self.check_allocation(event, loan, data)
        paid = {"penalty": 0, "interest": 0, "principal": 0}
        for part in data["perInstallment"]:
            row = self.installments[(loan["loan_id"], part["number"])]
            row["penalty_accrued_cents"] += part["penaltyAccruedCents"]
            loan["penalty_accrued_cents"] += part["penaltyAccruedCents"]
            row["penalty_paid_cents"] += part["penaltyCents"]
            row["interest_paid_cents"] += part["interestCents"]
            row["principal_paid_cents"] += part["principalCents"]
            for name in paid:
                paid[name] += part[name + "Cents"]
            settled = (row["principal_paid_cents"] == row["principal_cents"]
                       and row["interest_paid_cents"] == row["interest_cents"]
                       and row["penalty_paid_cents"] == row["penalty_accrued_cents"])
            if settled and row["status"] != "PAID":
                row["status"], row["paid_on"] = "PAID", data["paidOn"]
            elif not settled:
                row["status"] = "PARTIAL" if (row["principal_paid_cents"] + row["interest_paid_cents"]
                                              + row["penalty_paid_cents"]) > 0 else "UNPAID"
        # The allocation is the sum of what was paid per installment, and the amount its sum.
        allocation = {name: data["allocation"][name + "Cents"] for name in paid}
        if allocation != paid or sum(paid.values()) != data["amountCents"]:
            self.problems.append("position %d: allocation %s, per installment %s, amount %d"
                                 % (event["position"], allocation, paid, data["amountCents"]))
        loan["total_paid_cents"] += data["amountCents"]
        outstanding = loan["total_due_cents"] + loan["penalty_accrued_cents"] - loan["total_paid_cents"]
        if outstanding != data["outstandingAfterCents"]:
            self.problems.append("position %d: outstandingAfterCents %d, the schedule and payments leave %d"
                                 % (event["position"], data["outstandingAfterCents"], outstanding))
        self.payments[(loan["loan_id"], data["paymentId"])] = {
            "loan_id": loan["loan_id"], "payment_id": data["paymentId"], "paid_on": data["paidOn"],
            "amount_cents": data["amountCents"], "method": data.get("method", "CASH"), "type": data["type"],
            "penalty_cents": paid["penalty"], "interest_cents": paid["interest"],
            "principal_cents": paid["principal"], "outstanding_after_cents": outstanding,
            "received_by": data["receivedBy"], "agent_id": loan["agent_id"], "position": event["position"],
        }
        rate = self.rates.get(loan["agent_id"], self.rates.get("*", 1000))
        commission = round_half_away(paid["interest"] * rate, 10000)
        if commission:
            self.commissions_due[(loan["loan_id"], data["paymentId"])] = commission
        earnings = self.agent(loan["agent_id"])
        earnings["payments_count"] += 1
        earnings["collected_cents"] += data["amountCents"]
        day = self.collection_day(data["paidOn"])
        day["loan_payments_count"] += 1
        day["loan_collected_cents"] += data["amountCents"]
        day["loan_principal_cents"] += paid["principal"]
        day["loan_interest_cents"] += paid["interest"]
        day["loan_penalty_cents"] += paid["penalty"]
        by_agent = self.collections_by_agent.setdefault((data["paidOn"], loan["agent_id"]), {
            "day": data["paidOn"], "agent_id": loan["agent_id"], "payments_count": 0, "collected_cents": 0})
        by_agent["payments_count"] += 1
        by_agent["collected_cents"] += data["amountCents"]
        left = "nothing is left to pay" if outstanding == 0 else "%s is still outstanding" % money(outstanding)
        self.notify(event, loan["agent_id"], "PAYMENT_RECEIVED", loan["loan_id"],
                    "Payment %s of %s was received on loan %s on %s by %s; %s."
                    % (data["paymentId"], money(data["amountCents"]), loan["loan_id"], data["paidOn"],
                       data["receivedBy"], left))

    def check_allocation(self, event, loan, data):
        """The payment's penalty, allocation and type decided again from DOMAIN.md ("Penalty",
        "Allocation", "type") and compared with what the event says it did: the installments'
        paid columns are then built from a decision checked, not only copied."""
        paid_on, money_left, parts = data["paidOn"], data["amountCents"], {}
        oldest = next((row for row in loan["installments"] if row["status"] != "PAID"), None)
        for row in loan["installments"]:
            unpaid = (row["principal_cents"] - row["principal_paid_cents"]
                      + row["interest_cents"] - row["interest_paid_cents"])
            since = max(row["due_date"], row.get("accrued_on") or row["due_date"])
            days = days_between(paid_on, since)
            accrued = round_half_away(unpaid * days, 1000) if days > 0 and unpaid > 0 else 0
            row["accrued_on"] = paid_on
            owed = {"penalty": row["penalty_accrued_cents"] + accrued - row["penalty_paid_cents"],
                    "interest": row["interest_cents"] - row["interest_paid_cents"],
                    "principal": row["principal_cents"] - row["principal_paid_cents"]}
            part = {"penaltyAccruedCents": accrued}
            for name in ("penalty", "interest", "principal"):
                part[name + "Cents"] = min(money_left, owed[name])
                money_left -= part[name + "Cents"]
            if any(part.values()):
                parts[row["number"]] = part
        said = {part["number"]: {k: v for k, v in part.items() if k != "number"} for part in data["perInstallment"]}
        said = {number: part for number, part in said.items() if any(part.values())}
        if said != parts or money_left != 0:
            self.problems.append("position %d: per installment %s, DOMAIN.md's rules give %s (%d left over)"
                                 % (event["position"], said, parts, money_left))
            return
        owed_after = (loan["total_due_cents"] + loan["penalty_accrued_cents"] - loan["total_paid_cents"]
                      + sum(part["penaltyAccruedCents"] for part in parts.values()) - data["amountCents"])
        to_penalty_only = all(part["interestCents"] == part["principalCents"] == 0 for part in parts.values())
        oldest_left = oldest is not None and oldest["number"] in parts and (
            parts[oldest["number"]]["principalCents"] + oldest["principal_paid_cents"] < oldest["principal_cents"]
            or parts[oldest["number"]]["interestCents"] + oldest["interest_paid_cents"] < oldest["interest_cents"]
            or parts[oldest["number"]]["penaltyCents"] + oldest["penalty_paid_cents"]
            < parts[oldest["number"]]["penaltyAccruedCents"] + oldest["penalty_accrued_cents"])
        kind = ("FULL" if owed_after == 0 else "PENALTY" if to_penalty_only
                else "PARTIAL" if oldest_left else "REGULAR")
        if kind != data["type"]:
            self.problems.append("position %d: type %s, DOMAIN.md's rules give %s"
                                 % (event["position"], data["type"], kind))

    def on_LoanClosed(self, event, data):
        loan = self.loans[data["loanId"]]
        loan.update(status="CLOSED", closed_on=data["closedOn"])
        self.accounts[loan["account_id"]]["active_loans"] -= 1

    # Earnings and cash-outs

    def on_CommissionRateChanged(self, event, data):
        self.rates[data.get("agentId", "*")] = data["rateBp"]

    def on_CommissionEarned(self, event, data):
        loan = self.loans[data["loanId"]]
        rate = self.rates.get(loan["agent_id"], self.rates.get("*", 1000))
        expected = round_half_away(data["interestCents"] * rate, 10000)
        if data["agentId"] != loan["agent_id"] or data["rateBp"] != rate or data["commissionCents"] != expected:
            self.problems.append("position %d: commission %s, the loan's agent %s at %d bp earns %d"
                                 % (event["position"], data, loan["agent_id"], rate, expected))
        if self.commissions_due.pop((data["loanId"], data["paymentId"]), None) != data["commissionCents"]:
            self.problems.append("position %d: a commission no payment earned" % event["position"])
        self.agent(data["agentId"])["earned_cents"] += data["commissionCents"]

    def on_CashoutRequested(self, event, data):
        self.cashouts[data["cashoutId"]] = {
            "cashout_id": data["cashoutId"], "agent_id": data["agentId"], "amount_cents": data["amountCents"],
            "status": "PENDING", "requested_by": data["requestedBy"], "requested_at": event["recordedAt"],
            "decided_by": None, "decided_at": None, "reason": None,
        }
        self.agent(data["agentId"])["pending_cents"] += data["amountCents"]

    def on_CashoutApproved(self, event, data):
        cashout = self.cashouts[data["cashoutId"]]
        cashout.update(status="APPROVED", decided_by=data["approvedBy"], decided_at=event["recordedAt"])
        earnings = self.agent(cashout["agent_id"])
        earnings["pending_cents"] -= cashout["amount_cents"]
        earnings["cashed_out_cents"] += cashout["amount_cents"]
        self.notify(event, cashout["agent_id"], "CASHOUT_APPROVED", cashout["cashout_id"],
                    "Cash-out %s of %s was approved by %s."
                    % (cashout["cashout_id"], money(cashout["amount_cents"]), data["approvedBy"]))

    def on_CashoutRejected(self, event, data):
        cashout = self.cashouts[data["cashoutId"]]
        cashout.update(status="REJECTED", decided_by=data["rejectedBy"], decided_at=event["recordedAt"],
                       reason=data["reason"])
        self.agent(cashout["agent_id"])["pending_cents"] -= cashout["amount_cents"]
        self.notify(event, cashout["agent_id"], "CASHOUT_REJECTED", cashout["cashout_id"],
                    "Cash-out %s of %s was rejected by %s: %s"
                    % (cashout["cashout_id"], money(cashout["amount_cents"]), data["rejectedBy"], data["reason"]))

    # Invoices

    def on_InvoiceCreated(self, event, data):
        # Totals recomputed from each line's inputs (DOMAIN.md "Invoices"), not copied.
        subtotal = discount = taxable = tax = 0
        for line in data["lines"]:
            amount = round_half_away(line["quantityMilli"] * line["unitPriceCents"], 1000)
            line_discount = round_half_away(amount * line.get("discountBp", 0), 10000)
            line_tax = round_half_away((amount - line_discount) * line["taxRateBp"], 10000)
            subtotal, discount = subtotal + amount, discount + line_discount
            taxable, tax = taxable + amount - line_discount, tax + line_tax
        self.invoices[data["invoiceId"]] = {
            "invoice_id": data["invoiceId"], "invoice_number": data["invoiceNumber"],
            "party_id": data["customer"]["partyId"], "issue_date": data["issueDate"], "due_date": data["dueDate"],
            "taxable_cents": taxable, "tax_cents": tax, "total_cents": taxable + tax, "paid_cents": 0,
            "balance_cents": taxable + tax, "status": "ISSUED",
        }

    def on_InvoicePaymentRecorded(self, event, data):
        invoice = self.invoices[data["invoiceId"]]
        invoice["paid_cents"] += data["amountCents"]
        invoice["balance_cents"] = invoice["total_cents"] - invoice["paid_cents"]
        invoice["status"] = "PAID" if invoice["balance_cents"] == 0 else "PARTIALLY_PAID"
        self.invoice_payments.append((data["invoiceId"], data["paidOn"], data["amountCents"]))
        day = self.collection_day(data["paidOn"])
        day["invoice_payments_count"] += 1
        day["invoice_collected_cents"] += data["amountCents"]

    def on_InvoiceCancelled(self, event, data):
        self.invoices[data["invoiceId"]].update(status="CANCELLED", balance_cents=0)

    def collection_day(self, day):
        return self.collections.setdefault(day, {
            "day": day, "loan_payments_count": 0, "loan_collected_cents": 0, "loan_principal_cents": 0,
            "loan_interest_cents": 0, "loan_penalty_cents": 0, "invoice_payments_count": 0,
            "invoice_collected_cents": 0,
        })

    # Personal data

    def on_PersonalDataErased(self, event, data):
        self.erased.add((data["kind"], data["subjectId"]))

    # The queries

    def next_due(self, loan):
        if loan["status"] != "ACTIVE":
            return None
        return next((row["due_date"] for row in loan["installments"] if row["status"] != "PAID"), None)

    def query_users(self, as_of):
        return {(u["user_id"],): {k: u[k] for k in (
            "user_id", "username", "role", "status", "registered_at", "decided_by", "decided_at")}
            for u in self.users.values()}

    def query_accounts(self, as_of):
        rows = {}
        for account in self.accounts.values():
            row = {k: v for k, v in account.items() if k != "has_email"}
            erased = ("ACCOUNT", account["account_id"]) in self.erased
            row["name"], row["phone"] = Personal(erased), Personal(erased)
            # An email never given stays NULL, erased or not: there is nothing sealed to erase.
            row["email"] = Personal(erased) if account["has_email"] else None
            rows[(account["account_id"],)] = row
        return rows

    def query_portfolio(self, as_of):
        rows = {}
        for loan in self.loans.values():
            row = {k: v for k, v in loan.items() if k not in (
                "installments", "penalty_accrued_cents", "requested_by", "requested_at")}
            row["outstanding_cents"] = (loan["total_due_cents"] + loan["penalty_accrued_cents"]
                                        - loan["total_paid_cents"]) if loan["approved_on"] else 0
            row["next_due_date"] = self.next_due(loan)
            late = row["next_due_date"] is not None and row["next_due_date"] < as_of
            row["days_overdue"] = days_between(as_of, row["next_due_date"]) if late else 0
            rows[(loan["loan_id"],)] = row
        return rows

    def query_installments(self, as_of):
        return {key: {k: v for k, v in row.items() if k != "accrued_on"} for key, row in self.installments.items()}

    def query_payments(self, as_of):
        return {key: {k: v for k, v in row.items() if k != "position"} for key, row in self.payments.items()}

    def query_overdue(self, as_of):
        rows = {}
        portfolio = self.query_portfolio(as_of)
        for loan in self.loans.values():
            oldest = portfolio[(loan["loan_id"],)]["next_due_date"]
            if oldest is None or oldest >= as_of:
                continue
            days = days_between(as_of, oldest)
            owed = sum(row["total_cents"] - row["principal_paid_cents"] - row["interest_paid_cents"]
                       + row["penalty_accrued_cents"] - row["penalty_paid_cents"]
                       for row in loan["installments"] if row["status"] != "PAID" and row["due_date"] < as_of)
            rows[(loan["loan_id"],)] = {
                "loan_id": loan["loan_id"], "account_id": loan["account_id"], "agent_id": loan["agent_id"],
                "oldest_due_date": oldest, "days_overdue": days, "overdue_cents": owed,
                "outstanding_cents": portfolio[(loan["loan_id"],)]["outstanding_cents"],
                "bucket": "1-30" if days <= 30 else "31-60" if days <= 60 else "61-90" if days <= 90 else "90+",
            }
        return rows

    def query_agents(self, as_of):
        rows = {}
        for user in self.users.values():
            if user["role"] != "AGENT":
                continue
            earnings = dict(self.agents.get(user["user_id"]) or History().agent(user["user_id"]))
            earnings["collectible_cents"] = (earnings["earned_cents"] - earnings["cashed_out_cents"]
                                             - earnings["pending_cents"])
            earnings.update(agent_id=user["user_id"], username=user["username"], status=user["status"],
                            commission_rate_bp=self.rates.get(user["user_id"]))
            rows[(user["user_id"],)] = earnings
        return rows

    def query_cashouts(self, as_of):
        return {(c["cashout_id"],): dict(c) for c in self.cashouts.values()}

    def query_pending(self, as_of):
        rows = {}
        for user in self.users.values():
            if user["role"] == "AGENT" and user["status"] == "PENDING":
                rows[("AGENT", user["user_id"])] = {
                    "kind": "AGENT", "entity_id": user["user_id"], "agent_id": user["user_id"],
                    "requested_by": user["registered_by"], "requested_on": day_of(user["registered_at"]),
                    "amount_cents": None}
        for loan in self.loans.values():
            if loan["status"] == "PENDING_APPROVAL":
                rows[("LOAN", loan["loan_id"])] = {
                    "kind": "LOAN", "entity_id": loan["loan_id"], "agent_id": loan["agent_id"],
                    "requested_by": loan["requested_by"], "requested_on": loan["requested_on"],
                    "amount_cents": loan["principal_cents"]}
        for cashout in self.cashouts.values():
            if cashout["status"] == "PENDING":
                rows[("CASHOUT", cashout["cashout_id"])] = {
                    "kind": "CASHOUT", "entity_id": cashout["cashout_id"], "agent_id": cashout["agent_id"],
                    "requested_by": cashout["requested_by"], "requested_on": day_of(cashout["requested_at"]),
                    "amount_cents": cashout["amount_cents"]}
        return rows

    def query_dashboard(self, as_of):
        portfolio = self.query_portfolio(as_of).values()
        agents = [u for u in self.users.values() if u["role"] == "AGENT"]
        released = [loan for loan in self.loans.values() if loan["approved_on"] is not None]
        return {(): {
            "approved_agents": sum(u["status"] == "APPROVED" for u in agents),
            "pending_agents": sum(u["status"] == "PENDING" for u in agents),
            "active_accounts": sum(a["status"] == "ACTIVE" for a in self.accounts.values()),
            "loans_released": len(released),
            "principal_released_cents": sum(loan["principal_cents"] for loan in released),
            "active_loans": sum(row["status"] == "ACTIVE" for row in portfolio),
            "collectible_cents": sum(row["outstanding_cents"] for row in portfolio if row["status"] == "ACTIVE"),
            "collected_cents": sum(p["amount_cents"] for p in self.payments.values()),
            "pending_approvals": len(self.query_pending(as_of)),
        }}

    def query_invoices(self, as_of):
        rows = {}
        for invoice in self.invoices.values():
            row = dict(invoice)
            row["customer_name"] = Personal(("PARTY", invoice["party_id"]) in self.erased)
            rows[(invoice["invoice_id"],)] = row
        return rows

    def query_receivables(self, as_of):
        # As the books stood on as_of: invoices issued by then, payments paid by then.
        rows = {}
        for invoice in self.invoices.values():
            if invoice["status"] == "CANCELLED" or invoice["issue_date"] > as_of:
                continue
            paid = sum(amount for invoice_id, paid_on, amount in self.invoice_payments
                       if invoice_id == invoice["invoice_id"] and paid_on <= as_of)
            balance = invoice["total_cents"] - paid
            if balance <= 0:
                continue
            days = days_between(as_of, invoice["due_date"])
            bucket = ("current_cents" if days <= 0 else "days_1_30_cents" if days <= 30 else "days_31_60_cents"
                      if days <= 60 else "days_61_90_cents" if days <= 90 else "over_90_days_cents")
            row = rows.setdefault((invoice["party_id"],), {
                "party_id": invoice["party_id"],
                "name": Personal(("PARTY", invoice["party_id"]) in self.erased),
                "current_cents": 0, "days_1_30_cents": 0, "days_31_60_cents": 0, "days_61_90_cents": 0,
                "over_90_days_cents": 0, "total_cents": 0})
            row[bucket] += balance
            row["total_cents"] += balance
        return rows

    def query_collections(self, as_of):
        rows = {}
        for day in self.collections.values():
            row = dict(day)
            row["total_collected_cents"] = row["loan_collected_cents"] + row["invoice_collected_cents"]
            rows[(day["day"],)] = row
        return rows

    def query_collections_by_agent(self, as_of):
        return {key: dict(row) for key, row in self.collections_by_agent.items()}

    def query_notifications(self, as_of):
        return {key: dict(row) for key, row in self.notifications.items()}

    def query_audit(self, as_of):
        return {key: dict(row) for key, row in self.audit.items()}


class Personal:
    """A personal column: `[erased]` once its subject was erased, else opened text.

    As of an earlier position, a subject erased since reads `[erased]` too (its key is gone
    now), which a history cut short cannot know: then either is right, never the sealed form.
    """

    later_erasures_unknown = False

    def __init__(self, erased):
        self.erased = erased

    def matches(self, value):
        if self.erased:
            return value == ERASED
        opened = isinstance(value, str) and not value.startswith(SEALED_PREFIX)
        return opened and (value != ERASED or Personal.later_erasures_unknown)

    def __repr__(self):
        return "[erased]" if self.erased else "opened text"


# Each query, the columns that key its rows, and in what order its rows come (None: not checked).
QUERIES = {
    "users": (("user_id",), None),
    "accounts": (("account_id",), None),
    "portfolio": (("loan_id",), None),
    "installments": (("loan_id", "number"), None),
    "payments": (("loan_id", "payment_id"), None),
    "overdue": (("loan_id",), lambda row: (-row["days_overdue"], row["loan_id"])),
    "agents": (("agent_id",), None),
    "cashouts": (("cashout_id",), None),
    "pending": (("kind", "entity_id"), None),
    "dashboard": ((), None),
    "invoices": (("invoice_id",), None),
    "receivables": (("party_id",), lambda row: row["party_id"]),
    "collections": (("day",), lambda row: row["day"]),
    "collections-by-agent": (("day", "agent_id"), None),
    "notifications": (("user_id", "position"), None),
    "audit": (("position",), lambda row: row["position"]),
}


def ask(strata, data, name, as_of, position, travel):
    command = [strata, "query", name, "--data", data, "--format", "json"]
    command += ["--as-of", str(position)] if travel else ["--min-position", str(position)]
    if name in ("portfolio", "overdue", "receivables"):
        command += ["--date", as_of]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print("strata query %s: exit %d: %s" % (name, done.returncode, done.stderr.strip()), file=sys.stderr)
        sys.exit(2)
    return json.loads(done.stdout)


def compare(name, key_columns, order, computed, answer, report):
    """Every row and value of `answer` against `computed`; returns (values compared, columns not computed)."""
    rows = answer["rows"]
    actual = {tuple(row[c] for c in key_columns): row for row in rows}
    if len(actual) != len(rows):
        report("%s: %d rows but %d distinct keys" % (name, len(rows), len(actual)))
    for key in sorted(set(computed) - set(actual), key=repr):
        report("%s %s: missing (expected %s)" % (name, key, computed[key]))
    for key in sorted(set(actual) - set(computed), key=repr):
        report("%s %s: not expected (got %s)" % (name, key, actual[key]))
    values, uncovered = 0, set()
    for key in sorted(set(actual) & set(computed), key=repr):
        expected, got = computed[key], actual[key]
        uncovered |= set(got) - set(expected)
        for column, value in expected.items():
            if column not in got:
                report("%s %s: no column %s (expected %r)" % (name, key, column, value))
                continue
            values += 1
            same = value.matches(got[column]) if isinstance(value, Personal) else value == got[column]
            if not same:
                report("%s %s %s: expected %r, got %r" % (name, key, column, value, got[column]))
    if order is not None and [order(row) for row in rows] != sorted(order(row) for row in rows):
        report("%s: rows not in the documented order" % name)
    return values, uncovered


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strata", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--date", required=True, help="the day aging is counted on")
    parser.add_argument("--as-of", action="store_true",
                        help="ask for the read models as of the last event read (--as-of), not the live file")
    arguments = parser.parse_args()
    datetime.date.fromisoformat(arguments.date)
    Personal.later_erasures_unknown = arguments.as_of

    history = History()
    for line in sys.stdin:
        if line.strip():
            history.apply(json.loads(line))

    differences = []

    def report(text):
        differences.append(text)
        print(text)

    for (loan_id, payment_id), cents in sorted(history.commissions_due.items()):
        history.problems.append("payment %s on %s earned no commission (%d expected)" % (payment_id, loan_id, cents))
    for problem in history.problems:
        report("events: " + problem)
    counts, values, uncovered = {}, 0, {}
    for name, (key_columns, order) in QUERIES.items():
        answer = ask(arguments.strata, arguments.data, name, arguments.date, history.last_position,
                     arguments.as_of)
        if answer["position"] != history.last_position:
            report("%s: answered at position %d, the history read ends at %d"
                   % (name, answer["position"], history.last_position))
        computed = getattr(history, "query_" + name.replace("-", "_"))(arguments.date)
        compared, missed = compare(name, key_columns, order, computed, answer, report)
        counts[name], values = len(answer["rows"]), values + compared
        if missed:
            uncovered[name] = sorted(missed)
    print(json.dumps({"ok": not differences, "queries": counts, "values": values,
                      "differences": len(differences), "uncovered": uncovered}, sort_keys=True))
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
