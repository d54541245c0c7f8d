#!/usr/bin/env python3
"""An independent check of the money Strata decided: loan payments, commissions and invoices.

Written from DOMAIN.md alone; standard library only; this folder is not a SwiftPM target.

    payments.py [HISTORY.jsonl | --db events.db]

reads a history (`strata replay` output, one event a line, from a file or standard input; or
the store itself, opened read-only) and, event by event in position order, recomputes what each
money decision should have been from the events before it:

- PaymentReceived, from the loan's LoanApproved schedule and its earlier payments: the penalty
  accrued on each installment, the allocation (in total and per installment), the type and
  outstandingAfterCents; that the amount was allowed (> 0, at most what was owed) and its paidOn
  (not before approval, nor before the previous payment); LoanClosed in the same command exactly
  when nothing is left; CommissionEarned in the same command, its agent, interest, rate (from the
  CommissionRateChanged events before it) and amount, and none when it comes to 0.
- LoanApproved: the schedule again, by schedules.py, from the LoanRequested terms.
- InvoiceCreated: every line's amount, discount, taxable, tax and CGST/SGST/IGST, the totals,
  and the number (gapless per series, with its InvoiceNumberAllocated).
- InvoicePaymentRecorded / InvoicePaid / InvoiceCancelled: paid total, balance, status, no
  overpayment, InvoicePaid exactly when settled, no cancellation once paid.

It prints every mismatch, one line each, then a summary line of JSON
{"mismatches": N, "payments": P, "commissions": C, "invoices": I, "invoicePayments": J, ...}
and exits 1 when there was a mismatch. The rules, as DOMAIN.md states them:

- Penalty: for each installment, round(unpaid × days / 1000), unpaid = its unpaid principal +
  interest, days = paidOn − max(dueDate, its last accrual date) when positive; accrued when a
  payment is received, after which every installment's last accrual date is that paidOn.
- Allocation: oldest installment first; within each penalty, then interest, then principal;
  what is left flows on to the next.
- Type: FULL when nothing is owed after; PENALTY when it paid penalty only; PARTIAL when the
  oldest installment owing anything before it still owes after it; REGULAR otherwise.
- Commission: round(interest × rateBp / 10000) at the loan's agent's own rate, else the global
  default, else 1000 bp; no event when 0.
- Invoice line: amount = round(quantityMilli × unitPriceCents / 1000); discount = round(amount ×
  discountBp / 10000); taxable = amount − discount; tax = round(taxable × taxRateBp / 10000);
  both state codes equal: cgst = round(taxable × taxRateBp / 20000), sgst = tax − cgst; both
  given and different: igst = tax; else the tax alone. Totals are sums; total = taxable + tax.
Rounding is half away from zero, on exact rationals.
"""

import datetime
import json
import math
import os
import sqlite3
import sys
from fractions import Fraction

# The scripts beside this one, imported without leaving compiled files in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import schedules  # noqa: E402  (the independent schedule, beside this file)

INITIAL_COMMISSION_BP = 1000


def rounded(numerator, denominator=1):
    """numerator / denominator as an exact rational, rounded half away from zero."""
    exact = Fraction(numerator, denominator)
    magnitude = math.floor(abs(exact) + Fraction(1, 2))
    return magnitude if exact >= 0 else -magnitude


def day(text):
    return datetime.date.fromisoformat(text)


class Installment:
    def __init__(self, entry):
        self.number = entry["number"]
        self.due = day(entry["dueDate"])
        self.principal = entry["principalCents"]
        self.interest = entry["interestCents"]
        self.principal_paid = 0
        self.interest_paid = 0
        self.penalty_accrued = 0
        self.penalty_paid = 0
        self.last_accrual = None

    def unpaid_scheduled(self):
        return self.principal - self.principal_paid + self.interest - self.interest_paid

    def owed(self):
        return self.unpaid_scheduled() + self.penalty_accrued - self.penalty_paid

    def accrual_on(self, paid_on):
        start = self.due if self.last_accrual is None else max(self.due, self.last_accrual)
        days = (paid_on - start).days
        unpaid = self.unpaid_scheduled()
        return rounded(unpaid * days, 1000) if days > 0 and unpaid > 0 else 0


class Loan:
    """A loan as its events leave it, and what a payment on it should decide."""

    def __init__(self, requested):
        self.requested = requested
        self.status = "PENDING_APPROVAL"
        self.approved_on = None
        self.installments = []
        self.last_paid_on = None

    def approve(self, approved):
        self.status = "ACTIVE"
        self.approved_on = day(approved["approvedOn"])
        self.installments = [Installment(entry) for entry in approved["schedule"]]

    def owed_on(self, paid_on):
        return sum(i.owed() + i.accrual_on(paid_on) for i in self.installments)

    def decide(self, amount, paid_on):
        """What a payment of `amount` on `paid_on` should decide (without applying it)."""
        accrued = [i.accrual_on(paid_on) for i in self.installments]
        before = [i.owed() + a for i, a in zip(self.installments, accrued)]
        oldest = next((k for k, owed in enumerate(before) if owed > 0), None)
        remaining = amount
        total = {"penaltyCents": 0, "interestCents": 0, "principalCents": 0}
        parts = []
        after = []
        for k, (inst, accrual) in enumerate(zip(self.installments, accrued)):
            pay = {}
            for name, due in (
                ("penaltyCents", inst.penalty_accrued - inst.penalty_paid + accrual),
                ("interestCents", inst.interest - inst.interest_paid),
                ("principalCents", inst.principal - inst.principal_paid),
            ):
                pay[name] = min(remaining, due)
                remaining -= pay[name]
                total[name] += pay[name]
            after.append(before[k] - sum(pay.values()))
            if accrual > 0 or sum(pay.values()) > 0:
                parts.append(dict(number=inst.number, penaltyAccruedCents=accrual, **pay))
        outstanding = sum(after)
        if outstanding == 0:
            kind = "FULL"
        elif total["interestCents"] == 0 and total["principalCents"] == 0:
            kind = "PENALTY"
        elif oldest is not None and after[oldest] > 0:
            kind = "PARTIAL"
        else:
            kind = "REGULAR"
        return {"allocation": total, "perInstallment": parts, "type": kind,
                "outstandingAfterCents": outstanding, "unallocated": remaining}

    def apply(self, payment):
        """Folds a recorded payment in, as its event says (so one mismatch does not cascade)."""
        by_number = {i.number: i for i in self.installments}
        for part in payment["perInstallment"]:
            inst = by_number.get(part["number"])
            if inst is None:
                continue
            inst.penalty_accrued += part["penaltyAccruedCents"]
            inst.penalty_paid += part["penaltyCents"]
            inst.interest_paid += part["interestCents"]
            inst.principal_paid += part["principalCents"]
        for inst in self.installments:
            inst.last_accrual = day(payment["paidOn"])
        self.last_paid_on = day(payment["paidOn"])


def invoice_line(line, split):
    """A line's computed amounts, from its inputs, per DOMAIN.md."""
    amount = rounded(line["quantityMilli"] * line["unitPriceCents"], 1000)
    discount = rounded(amount * line["discountBp"], 10000) if "discountBp" in line else 0
    taxable = amount - discount
    tax = rounded(taxable * line["taxRateBp"], 10000)
    out = {"amountCents": amount, "discountCents": discount, "taxableCents": taxable, "taxCents": tax}
    if split == "central":
        out["cgstCents"] = rounded(taxable * line["taxRateBp"], 20000)
        out["sgstCents"] = tax - out["cgstCents"]
    elif split == "integrated":
        out["igstCents"] = tax
    return out


def tax_split(seller, customer):
    if seller is None or customer is None:
        return "unsplit"
    return "central" if seller == customer else "integrated"


class Checker:
    def __init__(self):
        self.mismatches = []
        self.types = {}
        self.counts = {"events": 0, "schedules": 0, "payments": 0, "commissions": 0, "loansClosed": 0,
                       "paymentsAccruingPenalty": 0,
                       "invoices": 0, "invoiceLines": 0, "invoicePayments": 0, "invoicesPaid": 0}
        self.accounts = {}  # accountId -> assigned agent
        self.loans = {}
        self.global_rate = None
        self.agent_rates = {}
        self.invoices = {}
        self.series = {}  # series -> last sequence
        self.allocated = {}  # invoiceId -> (series, sequence, number)
        self.commission_paid = {}  # paymentId -> agentId of a CommissionEarned seen for it

    def mismatch(self, event, text):
        self.mismatches.append("position %s %s %s: %s" % (event["position"], event["type"], event["stream"], text))

    def expect(self, event, what, actual, expected):
        if actual != expected:
            self.mismatch(event, "%s is %s, expected %s" % (what, json.dumps(actual), json.dumps(expected)))

    # The events of one command are checked together: a payment with its commission and closing.
    def command(self, events):
        for event in events:
            self.counts["events"] += 1
            handler = getattr(self, "on_" + event["type"], None)
            if handler:
                handler(event, events)

    def on_AccountOpened(self, event, _):
        self.accounts[event["data"]["accountId"]] = event["data"]["assignedAgentId"]

    def on_AccountUpdated(self, event, _):
        if "assignedAgentId" in event["data"]:
            self.accounts[event["data"]["accountId"]] = event["data"]["assignedAgentId"]

    def on_CommissionRateChanged(self, event, _):
        data = event["data"]
        if "agentId" in data:
            self.agent_rates[data["agentId"]] = data["rateBp"]
        else:
            self.global_rate = data["rateBp"]

    def on_LoanRequested(self, event, _):
        data = event["data"]
        self.expect(event, "agentId (the account's agent)", data["agentId"], self.accounts.get(data["accountId"]))
        self.loans[data["loanId"]] = Loan(data)

    def on_LoanApproved(self, event, _):
        data = event["data"]
        loan = self.loans.get(data["loanId"])
        if loan is None:
            return self.mismatch(event, "approval of a loan never requested")
        self.expect(event, "the loan's status before", loan.status, "PENDING_APPROVAL")
        terms = dict(loan.requested, approvedOn=data["approvedOn"])
        expected = schedules.schedule(terms)
        self.counts["schedules"] += 1
        if data["schedule"] != expected:
            first = next((k for k, (a, b) in enumerate(zip(data["schedule"], expected)) if a != b), None)
            self.mismatch(event, "schedule differs from schedules.py (%d / %d installments, first at %s)"
                          % (len(data["schedule"]), len(expected), first))
        loan.approve(data)

    def on_PaymentReceived(self, event, events):
        data = event["data"]
        self.counts["payments"] += 1
        loan = self.loans.get(data["loanId"])
        if loan is None or loan.status != "ACTIVE":
            return self.mismatch(event, "payment on a loan that is %s" % (loan.status if loan else "unknown"))
        paid_on = day(data["paidOn"])
        if paid_on < loan.approved_on:
            self.mismatch(event, "paidOn %s before the approval on %s" % (paid_on, loan.approved_on))
        if loan.last_paid_on and paid_on < loan.last_paid_on:
            self.mismatch(event, "paidOn %s before the previous payment's %s" % (paid_on, loan.last_paid_on))
        amount = data["amountCents"]
        owed = loan.owed_on(paid_on)
        if amount <= 0 or amount > owed:
            self.mismatch(event, "amount %d accepted with %d owed" % (amount, owed))
        decided = loan.decide(amount, paid_on)
        self.types[data["type"]] = self.types.get(data["type"], 0) + 1
        if any(p["penaltyAccruedCents"] > 0 for p in decided["perInstallment"]):
            self.counts["paymentsAccruingPenalty"] += 1
        for name in ("allocation", "type", "outstandingAfterCents"):
            self.expect(event, name, data[name], decided[name])
        if data["perInstallment"] != decided["perInstallment"]:
            got = {p["number"]: p for p in data["perInstallment"]}
            want = {p["number"]: p for p in decided["perInstallment"]}
            for number in sorted(set(got) | set(want)):
                self.expect(event, "perInstallment #%d" % number, got.get(number), want.get(number))
        self.expect(event, "allocation sum", sum(data["allocation"].values()), amount)

        closed = [e for e in events if e["type"] == "LoanClosed" and e["data"]["loanId"] == data["loanId"]]
        if data["outstandingAfterCents"] == 0 or decided["outstandingAfterCents"] == 0:
            if len(closed) != 1:
                self.mismatch(event, "%d LoanClosed with it, expected 1" % len(closed))
            else:
                self.expect(closed[0], "LoanClosed", closed[0]["data"],
                            {"loanId": data["loanId"], "closedOn": data["paidOn"], "paymentId": data["paymentId"]})
        elif closed:
            self.mismatch(event, "LoanClosed with %d still owed" % decided["outstandingAfterCents"])

        agent = loan.requested["agentId"]
        rate = self.agent_rates.get(agent, self.global_rate if self.global_rate is not None else INITIAL_COMMISSION_BP)
        interest = data["allocation"]["interestCents"]
        commission = rounded(interest * rate, 10000)
        earned = [e for e in events if e["type"] == "CommissionEarned" and e["data"]["paymentId"] == data["paymentId"]]
        if commission == 0:
            if earned:
                self.mismatch(event, "CommissionEarned of %s where round(%d × %d / 10000) = 0"
                              % (earned[0]["data"]["commissionCents"], interest, rate))
        elif len(earned) != 1:
            self.mismatch(event, "%d CommissionEarned with it, expected one of %d" % (len(earned), commission))
        else:
            self.counts["commissions"] += 1
            self.expect(earned[0], "its stream", earned[0]["stream"], "agent-" + agent)
            self.expect(earned[0], "CommissionEarned", earned[0]["data"], {
                "agentId": agent, "loanId": data["loanId"], "paymentId": data["paymentId"],
                "interestCents": interest, "rateBp": rate, "commissionCents": commission})
        loan.apply(data)

    def on_LoanClosed(self, event, _):
        self.counts["loansClosed"] += 1
        loan = self.loans.get(event["data"]["loanId"])
        if loan:
            loan.status = "CLOSED"

    def on_InvoiceNumberAllocated(self, event, _):
        data = event["data"]
        last = self.series.get(data["series"], 0)
        self.expect(event, "sequence", data["sequence"], last + 1)
        self.expect(event, "the stream version", event["version"], data["sequence"])
        self.expect(event, "invoiceNumber", data["invoiceNumber"], "%s-%06d" % (data["series"], data["sequence"]))
        self.series[data["series"]] = data["sequence"]
        self.allocated[data["invoiceId"]] = data

    def on_InvoiceCreated(self, event, events):
        data = event["data"]
        self.counts["invoices"] += 1
        allocated = self.allocated.pop(data["invoiceId"], None)
        if allocated is None or allocated not in [e["data"] for e in events]:
            self.mismatch(event, "no InvoiceNumberAllocated for it in the same command")
        else:
            self.expect(event, "invoiceNumber", data["invoiceNumber"], allocated["invoiceNumber"])
            self.expect(event, "series", data["series"], allocated["series"])
        split = tax_split(data.get("sellerStateCode"), data["customer"].get("stateCode"))
        computed = ("amountCents", "discountCents", "taxableCents", "taxCents", "cgstCents", "sgstCents", "igstCents")
        sums = {}
        for k, line in enumerate(data["lines"]):
            self.counts["invoiceLines"] += 1
            expected = invoice_line(line, split)
            got = {name: line[name] for name in computed if name in line}
            self.expect(event, "line %d" % k, got, expected)
            for name, value in expected.items():
                sums[name] = sums.get(name, 0) + value
        totals = {"subtotalCents": sums.get("amountCents", 0), "discountCents": sums.get("discountCents", 0),
                  "taxableCents": sums.get("taxableCents", 0), "taxCents": sums.get("taxCents", 0)}
        for name in ("cgstCents", "sgstCents", "igstCents"):
            if name in sums:
                totals[name] = sums[name]
        totals["totalCents"] = totals["taxableCents"] + totals["taxCents"]
        self.expect(event, "totals", data["totals"], totals)
        self.invoices[data["invoiceId"]] = {"total": totals["totalCents"], "paid": 0, "status": "ISSUED",
                                            "issueDate": day(data["issueDate"])}

    def on_InvoicePaymentRecorded(self, event, events):
        data = event["data"]
        self.counts["invoicePayments"] += 1
        invoice = self.invoices.get(data["invoiceId"])
        if invoice is None:
            return self.mismatch(event, "payment on an unknown invoice")
        if invoice["status"] in ("PAID", "CANCELLED"):
            self.mismatch(event, "payment on an invoice that is %s" % invoice["status"])
        if day(data["paidOn"]) < invoice["issueDate"]:
            self.mismatch(event, "paidOn %s before the issue date" % data["paidOn"])
        amount = data["amountCents"]
        balance = invoice["total"] - invoice["paid"]
        if amount <= 0 or amount > balance:
            self.mismatch(event, "amount %d accepted with a balance of %d" % (amount, balance))
        paid = invoice["paid"] + amount
        status = "PAID" if paid == invoice["total"] else "PARTIALLY_PAID"
        self.expect(event, "paidTotalCents", data["paidTotalCents"], paid)
        self.expect(event, "balanceCents", data["balanceCents"], invoice["total"] - paid)
        self.expect(event, "status", data["status"], status)
        settled = [e for e in events if e["type"] == "InvoicePaid" and e["data"]["invoiceId"] == data["invoiceId"]]
        if status == "PAID":
            if len(settled) != 1:
                self.mismatch(event, "%d InvoicePaid with the settling payment, expected 1" % len(settled))
            else:
                self.expect(settled[0], "InvoicePaid", settled[0]["data"],
                            {"invoiceId": data["invoiceId"], "paidOn": data["paidOn"], "paidTotalCents": paid})
        elif settled:
            self.mismatch(event, "InvoicePaid with %d still owed" % (invoice["total"] - paid))
        invoice["paid"] = data["paidTotalCents"]
        invoice["status"] = data["status"]

    def on_InvoicePaid(self, _event, _):
        self.counts["invoicesPaid"] += 1

    def on_InvoiceCancelled(self, event, _):
        invoice = self.invoices.get(event["data"]["invoiceId"])
        if invoice and invoice["paid"] > 0:
            self.mismatch(event, "cancelled with %d paid" % invoice["paid"])
        if invoice:
            invoice["status"] = "CANCELLED"

    def summary(self):
        return dict(self.counts, mismatches=len(self.mismatches), paymentTypes=self.types)


def history_from_lines(lines):
    for line in lines:
        if line.strip():
            yield json.loads(line)


def history_from_store(path):
    connection = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    rows = connection.execute(
        "SELECT position, stream, version, type, data, metadata FROM events ORDER BY position")
    for position, stream, version, kind, data, metadata in rows:
        yield {"position": position, "stream": stream, "version": version, "type": kind,
               "data": json.loads(data), "metadata": json.loads(metadata)}
    connection.close()


def by_command(history):
    """The events in position order, gathered by the command that appended them."""
    group, command = [], None
    for event in history:
        this = event["metadata"].get("commandId")
        if group and this != command:
            yield group
            group = []
        group.append(event)
        command = this
    if group:
        yield group


def check(history):
    checker = Checker()
    for events in by_command(history):
        checker.command(events)
    return checker


def main(argv):
    if len(argv) >= 2 and argv[0] == "--db":
        history = history_from_store(argv[1])
    elif argv and argv[0] != "-":
        history = history_from_lines(open(argv[0], encoding="utf-8"))
    else:
        history = history_from_lines(sys.stdin)
    checker = check(history)
    for line in checker.mismatches:
        print(line)
    print(json.dumps(checker.summary(), sort_keys=True))
    return 1 if checker.mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
