#!/usr/bin/env python3
"""A randomized history of loan payments, commissions and invoices, sent to a running Strata
and then checked by payments.py. Standard library only.

    payment_workload.py [--seed N] [--loans N] [--invoices N] [--today YYYY-MM-DD] [--prefix P]
                        [--senders N]

Environment: STRATA_DATA (the data directory, whose key file has a key with the commands scope
and whose store has the approved admin `root`), STRATA_COMMANDS (the commands endpoint) and
STRATA_BIN (the `strata` executable, default `strata` on the PATH).

The same seed and today give the same commands. They are made to press on the rules: loans of
every frequency, method and tenure, approved up to a year back so that payments come late by
any number of days; payments of an installment exactly, of part of one, of several, of penalty
only, of everything owed, two on one day, some leaving an unpaid amount whose penalty falls on
a half cent; amounts one cent above everything owed (which must be refused), payments on a
closed loan, dated before the previous payment or before the approval; an account moved to
another agent after its loan was requested; commission rates changed per agent and globally
among the payments (0 and half-cent rates included); invoices of many lines with odd quantities
and prices at half cents, discounts, every tax slab, state codes equal, different and missing,
in three series; invoice payments in parts, in full, above the balance and before the issue
date; invoices cancelled, and refused cancellation once paid. After the setup, the commands go
through `--senders` concurrent `strata send` (3 by default), each with whole loans and
invoices, so that invoices of one series race for their numbers. Amounts are aimed with
payments.py's model of the loan; what the service decided is then judged by payments.py from
the store, and every reply is compared with what the model expects (accepted, or refused with a
given reason).

Prints every mismatch, one line each, then a summary line of JSON, and exits 1 when any.
"""

import argparse
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
import zlib

# The scripts beside this one, imported without leaving compiled files in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import payments  # noqa: E402
import schedules  # noqa: E402

ADMIN = "root"
FREQUENCIES = ["WEEKLY", "BI_MONTHLY", "MONTHLY"]
SLABS = [0, 500, 1200, 1800, 2800]


class Workload:
    def __init__(self, seed, today, prefix):
        self.random = random.Random(seed)
        self.today = today
        self.prefix = prefix
        self.commands = []  # (body, expected): expected is None (accepted) or a refusal reason
        self.agents = ["%s-ag%d" % (prefix, k) for k in range(4)]
        self.accounts = {}
        self.moving = set()

    def send(self, kind, actor, payload, expected=None):
        body = {"id": "%s-c%d" % (self.prefix, len(self.commands)), "type": kind, "actor": actor, "payload": payload}
        self.commands.append((body, expected))

    @staticmethod
    def entity(body):
        """What a command's order matters for: its loan or invoice; the rest in any order."""
        payload = body["payload"]
        return payload.get("loanId") or payload.get("invoiceId") or body["id"]

    def date(self, value):
        return value.isoformat()

    def setup(self):
        for k, agent in enumerate(self.agents):
            self.send("RegisterUser", agent, {"userId": agent, "username": "%s-u%d" % (self.prefix, k),
                                              "email": "%s@agents.example.com" % agent, "role": "AGENT"})
            self.send("ApproveAgent", ADMIN, {"agentId": agent})
        for k in range(12):
            account = "%s-acct%d" % (self.prefix, k)
            agent = self.agents[k % len(self.agents)]
            self.accounts[account] = agent
            if k >= 9:
                self.moving.add(account)
            self.send("OpenAccount", ADMIN, {"accountId": account, "name": "Borrower %d" % k,
                                             "phone": "+91984500%04d" % k, "address": "%d Market Road" % k,
                                             "assignedAgentId": agent})

    # Loans: each loan's commands are made in order with the model, then interleaved with the others.

    def principal(self):
        pick = self.random.random()
        if pick < 0.2:
            return self.random.randint(1, 3000)
        if pick < 0.9:
            return self.random.randint(3000, 5_000_000)
        return self.random.randint(5_000_000, 100_000_000)

    def loan(self, number):
        r = self.random
        loan_id = "%s-loan%d" % (self.prefix, number)
        account = r.choice(sorted(self.accounts))
        # An account that moves among agents (below) has its loans requested and paid by the admin, as
        # the agent it has when the loan is requested depends on how the streams interleave.
        agent = ADMIN if account in self.moving else self.accounts[account]
        requested_on = self.today - datetime.timedelta(days=r.randint(0, 366))
        approved_on = min(self.today, requested_on + datetime.timedelta(days=r.choice([0, 0, 1, 3, 10])))
        terms = {"loanId": loan_id, "accountId": account, "principalCents": self.principal(),
                 "monthlyRateBp": r.randint(300, 500), "tenureMonths": r.randint(2, 12),
                 "frequency": FREQUENCIES[number % 3], "requestedOn": self.date(requested_on)}
        if r.random() < 0.6:
            terms["interestMethod"] = r.choice(["REDUCING", "FLAT"])
        out = [("RequestLoan", agent, terms, None)]
        out.append(("ApproveLoan", ADMIN, {"loanId": loan_id, "approvedOn": self.date(approved_on)}, None))

        model = payments.Loan(dict(terms, interestMethod=terms.get("interestMethod", "REDUCING")))
        model.approve({"approvedOn": self.date(approved_on),
                       "schedule": schedules.schedule(dict(model.requested, approvedOn=self.date(approved_on)))})
        paid_on = approved_on
        for k in range(r.randint(0, 14)):
            paid_on = min(self.today, paid_on + datetime.timedelta(days=r.choice([0, 1, 3, 7, 13, 15, 29, 31, 45, 90])))
            if k == 0 and r.random() < 0.1:  # nothing paid until today, however long overdue
                paid_on = self.today
            payment = {"paymentId": "%s-p%d" % (loan_id, k), "loanId": loan_id, "paidOn": self.date(paid_on),
                       "method": r.choice(["CASH", "WALLET", "BANK"])}
            actor = r.choice([agent, ADMIN])
            if model.status == "CLOSED":
                out.append(("ReceivePayment", actor, dict(payment, amountCents=1), "LOAN_NOT_ACTIVE"))
                break
            if model.last_paid_on and model.last_paid_on > approved_on and r.random() < 0.05:
                early = dict(payment, paidOn=self.date(model.last_paid_on - datetime.timedelta(days=1)))
                out.append(("ReceivePayment", actor, dict(early, amountCents=1), "PAYMENT_DATE_OUT_OF_ORDER"))
                continue
            if approved_on > requested_on and r.random() < 0.03:
                early = dict(payment, paidOn=self.date(approved_on - datetime.timedelta(days=1)))
                out.append(("ReceivePayment", actor, dict(early, amountCents=1), "PAYMENT_BEFORE_APPROVAL"))
                continue
            owed = model.owed_on(paid_on)
            amount = self.payment_amount(model, paid_on, owed)
            if amount > owed:
                out.append(("ReceivePayment", actor, dict(payment, amountCents=amount), "AMOUNT_EXCEEDS_OUTSTANDING"))
                continue
            decided = model.decide(amount, paid_on)
            out.append(("ReceivePayment", actor, dict(payment, amountCents=amount), None))
            model.apply({"paidOn": self.date(paid_on), "perInstallment": decided["perInstallment"]})
            if decided["outstandingAfterCents"] == 0:
                model.status = "CLOSED"
        return out

    def payment_amount(self, model, paid_on, owed):
        """An amount chosen to press on one rule or another."""
        r = self.random
        accrued = [i.accrual_on(paid_on) for i in model.installments]
        owing = [(i, i.owed() + a) for i, a in zip(model.installments, accrued) if i.owed() + a > 0]
        first, first_owed = owing[0]
        pick = r.random()
        if pick < 0.25:  # exactly the oldest installment
            return first_owed
        if pick < 0.40:  # part of it
            return r.randint(1, first_owed)
        if pick < 0.50:  # several installments
            return sum(o for _, o in owing[: r.randint(2, 5)])
        if pick < 0.58:  # penalty only, when there is some
            penalty = first.penalty_accrued - first.penalty_paid + accrued[model.installments.index(first)]
            return r.randint(1, penalty) if penalty > 0 else first_owed
        if pick < 0.66:  # leave the oldest installment owing an odd multiple of 500 (a half-cent penalty a day)
            unpaid = first.unpaid_scheduled()
            leave = unpaid - (unpaid % 1000) - 500
            pay = first_owed - leave
            return pay if 0 < leave < unpaid and 0 < pay <= owed else first_owed
        if pick < 0.74:
            return owed  # everything: FULL
        if pick < 0.82:
            return owed + 1  # one cent too much: refused
        return r.randint(1, owed)

    def move(self):
        """An account moved to another agent: its loans keep the agent they were requested with."""
        account = self.random.choice(sorted(self.moving))
        other = self.random.choice([a for a in self.agents if a != self.accounts[account]])
        self.accounts[account] = other
        self.send("UpdateAccount", ADMIN, {"accountId": account, "assignedAgentId": other})

    def commission_rate(self):
        r = self.random
        rate = r.choice([0, 1, 333, 1000, 2500, 5000, 7777, 10000, r.randint(0, 10000)])
        if r.random() < 0.6:
            self.send("SetCommissionRate", ADMIN, {"agentId": r.choice(self.agents), "rateBp": rate})
        else:
            self.send("SetCommissionRate", ADMIN, {"rateBp": rate})

    # Invoices.

    def line(self, k):
        r = self.random
        quantity = r.choice([1, 3, 500, 1500, 2500, 333, r.randint(1, 100_000), r.randint(1, 10_000_000)])
        price = r.choice([0, 1, 3, 5, 99, r.randint(1, 100_000), r.randint(1, 50_000_000)])
        line = {"description": "item %d" % k, "quantityMilli": quantity, "unitPriceCents": price,
                "taxRateBp": r.choice(SLABS)}
        if r.random() < 0.5:
            line["discountBp"] = r.choice([0, 1, 2500, 5000, 10000, r.randint(0, 10000)])
        return line

    def invoice(self, number):
        r = self.random
        invoice_id = "%s-inv%d" % (self.prefix, number)
        issue = self.today - datetime.timedelta(days=r.randint(0, 90))
        customer = {"partyId": "%s-party%d" % (self.prefix, r.randint(0, 5)), "name": "Customer"}
        if r.random() < 0.3:
            customer["taxId"] = "29ABCDE1234F1Z5"
        seller, state = r.choice([None, "29", "27"]), r.choice([None, "29", "27"])
        if state:
            customer["stateCode"] = state
        payload = {"invoiceId": invoice_id, "customer": customer, "issueDate": self.date(issue),
                   "dueDate": self.date(issue + datetime.timedelta(days=r.randint(0, 30))),
                   "lines": [self.line(k) for k in range(r.choice([1, 2, 5, 12, 30]))]}
        if seller:
            payload["sellerStateCode"] = seller
        series = r.choice([None, None, "S1", "B2"])
        if series:
            payload["series"] = series
        actor = r.choice([ADMIN] + self.agents)
        out = [("CreateInvoice", actor, payload, None)]
        split = payments.tax_split(seller, state)
        computed = [payments.invoice_line(line, split) for line in payload["lines"]]
        total = sum(line["taxableCents"] + line["taxCents"] for line in computed)
        paid, paid_on = 0, issue
        if r.random() < 0.1:
            out.append(("CancelInvoice", actor, {"invoiceId": invoice_id, "reason": "issued in error"}, None))
            body = {"paymentId": "%s-ip0" % invoice_id, "invoiceId": invoice_id, "amountCents": 1,
                    "paidOn": self.date(issue), "method": "CASH"}
            out.append(("RecordInvoicePayment", actor, body, "INVOICE_CANCELLED"))
            return out
        if issue > self.today - datetime.timedelta(days=90) and r.random() < 0.05:
            body = {"paymentId": "%s-early" % invoice_id, "invoiceId": invoice_id, "amountCents": 1,
                    "paidOn": self.date(issue - datetime.timedelta(days=1)), "method": "CASH"}
            out.append(("RecordInvoicePayment", actor, body, "PAYMENT_BEFORE_ISSUE"))
        for k in range(r.randint(0, 4)):
            balance = total - paid
            paid_on = min(self.today, paid_on + datetime.timedelta(days=r.randint(0, 20)))
            pick = r.random()
            amount = balance if pick < 0.4 else balance + 1 if pick < 0.55 else r.randint(1, max(1, balance))
            body = {"paymentId": "%s-ip%d" % (invoice_id, k), "invoiceId": invoice_id, "amountCents": amount,
                    "paidOn": self.date(paid_on), "method": r.choice(["CASH", "WALLET", "BANK"])}
            if balance == 0:
                break
            if amount > balance:
                out.append(("RecordInvoicePayment", actor, body, "AMOUNT_EXCEEDS_BALANCE"))
                continue
            out.append(("RecordInvoicePayment", actor, body, None))
            paid += amount
        if paid > 0 and r.random() < 0.2:
            cancel = {"invoiceId": invoice_id, "reason": "too late"}
            out.append(("CancelInvoice", ADMIN, cancel, "INVOICE_HAS_PAYMENTS"))
        return out

    def build(self, loans, invoices):
        self.setup()
        self.setup_count = len(self.commands)
        streams = [self.loan(k) for k in range(loans)] + [self.invoice(k) for k in range(invoices)]
        streams.append([("rate",)] * (loans // 2 + 3))
        streams.append([("move",)] * (loans // 6 + 2))
        # Interleave the streams at random, each in its own order.
        while streams:
            stream = self.random.choice(streams)
            item = stream.pop(0)
            if not stream:
                streams.remove(stream)
            if item[0] == "rate":
                self.commission_rate()
            elif item[0] == "move":
                self.move()
            else:
                self.send(*item)


def send(commands):
    """A `strata send` under way with `commands` as its input."""
    strata = os.environ.get("STRATA_BIN", "strata")
    lines = "".join(json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n" for body, _ in commands)
    with tempfile.TemporaryFile("w+") as source:
        source.write(lines)
        source.seek(0)
        return subprocess.Popen([strata, "send", "-", "--timeout", "60"], stdin=source,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--loans", type=int, default=60)
    parser.add_argument("--invoices", type=int, default=40)
    parser.add_argument("--today", default=datetime.datetime.now(datetime.timezone.utc).date().isoformat())
    parser.add_argument("--prefix", default=None)
    parser.add_argument("--senders", type=int, default=3,
                        help="concurrent `strata send` after the setup, each with whole loans and invoices")
    options = parser.parse_args()
    workload = Workload(options.seed, datetime.date.fromisoformat(options.today),
                        options.prefix or "w%d" % options.seed)
    workload.build(options.loans, options.invoices)

    mismatches = []
    replies = {}
    setup = workload.commands[: workload.setup_count]
    rest = workload.commands[workload.setup_count:]
    parts = [[c for c in rest if zlib.crc32(Workload.entity(c[0]).encode()) % options.senders == k]
             for k in range(options.senders)]
    # The setup first; then the senders at once, so that invoices of one series race for numbers.
    for batch in [[setup]] + [parts]:
        runs = [(commands, send(commands)) for commands in batch if commands]
        for commands, process in runs:
            out, err = process.communicate()
            answers = [json.loads(line) for line in out.splitlines() if line.strip()]
            if len(answers) != len(commands):
                mismatches.append("strata send answered %d of %d commands (exit %d): %s"
                                  % (len(answers), len(commands), process.returncode, err.strip()[-500:]))
            for (body, _), reply in zip(commands, answers):
                replies[body["id"]] = reply
    refused = 0
    for body, expected in workload.commands:
        reply = replies.get(body["id"], {"ok": False, "error": {"reason": "UNANSWERED"}})
        got = None if reply.get("ok") else reply.get("error", {}).get("reason")
        refused += got is not None
        if got != expected:
            mismatches.append("command %s %s %s: %s, expected %s" % (
                body["id"], body["type"], json.dumps(body["payload"], sort_keys=True),
                "refused " + json.dumps(reply.get("error")) if got else "accepted",
                "refused " + expected if expected else "accepted"))

    checker = payments.check(payments.history_from_store(os.path.join(os.environ["STRATA_DATA"], "events.db")))
    mismatches += checker.mismatches
    for line in mismatches:
        print(line)
    print(json.dumps(dict(checker.summary(), commands=len(workload.commands), refused=refused,
                          mismatches=len(mismatches)), sort_keys=True))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
