"""Strata's lending loop through the Python `eventsourcing` library, for `strata bench commands --peer`.

The same business work as Strata's benchmark (Sources/Workloads/LendingWorkload.swift), one
command at a time, each saved in its own durable SQLite transaction before the next:

- setup (not timed): an admin, 4 agents registered and approved, 25 borrowers' accounts each,
  and each agent's earnings aggregate;
- per loan: RequestLoan (the account and its agent checked), ApproveLoan (by the admin; the
  amortisation schedule computed in integer cents, as Strata's LoanApproved carries it),
  ReceivePayment (penalty accrual, allocation to installments, and the agent's commission on
  the interest part, saved with the payment in one transaction).

That is 3 business operations and 4 events per loan (LoanRequested, LoanApproved,
PaymentReceived on the loan; CommissionEarned on the agent's earnings), with the same
principals, rates, tenures and frequencies as Strata's loans of the same numbers.

Storage: the library's SQLite persistence in a file, in the journal mode it chooses (WAL) and
SQLite's default synchronous level, which is FULL on a default build: the run checks it on the
library's own connection and reports both. The library's aggregate cache holds every aggregate
in memory, as Strata's command service holds its state: each command then costs one small
query for newer events, its decision, and one commit.

Prints one JSON line, integers only (Strata's JSON has no fractions): the operations and events
per second from the first command to the last commit, rounded.
"""

import argparse
import datetime
import importlib.metadata
import json
import math
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event

AGENTS = 4
ACCOUNTS_PER_AGENT = 25
ADMIN = "p-admin"
FREQUENCIES = ["WEEKLY", "BI_MONTHLY", "MONTHLY"]
PERIOD_DAYS = {"WEEKLY": 7, "BI_MONTHLY": 15, "MONTHLY": 30}
PAYMENT_METHODS = ["CASH", "WALLET", "BANK"]
COMMISSION_RATE_BP = 1000


class Rejected(Exception):
    pass


# Money: integer cents, one rounding rule (half away from zero), as Strata's Money.


def divide(numerator: int, denominator: int) -> int:
    quotient, remainder = divmod(abs(numerator), denominator)
    if remainder * 2 >= denominator:
        quotient += 1
    return -quotient if numerator < 0 else quotient


def round_cents(value: float) -> int:
    magnitude = abs(value)
    whole = math.floor(magnitude)
    rounded = whole + 1 if magnitude - whole >= 0.5 else whole
    return -rounded if value < 0 else rounded


def schedule(principal: int, rate_bp: int, tenure_months: int, frequency: str, approved_on: str) -> list:
    """REDUCING (Strata's default, which every loan of the workload gets), as Strata's
    AmortizationSchedule: the EMI from the annuity formula rounded to a cent; each
    installment's interest on the remaining balance, in integers; the last installment takes
    the whole remaining balance."""
    period = PERIOD_DAYS[frequency]
    n = (tenure_months * 30 + period - 1) // period
    r = rate_bp / 10_000 * period / 30
    growth = (1 + r) ** n
    emi = round_cents(principal * r * growth / (growth - 1))
    start = datetime.date.fromisoformat(approved_on)
    balance = principal
    entries = []
    for number in range(1, n + 1):
        interest = divide(balance * rate_bp * period, 300_000)
        part = balance if number == n else min(max(emi - interest, 0), balance)
        balance -= part
        entries.append({
            "number": number, "dueDate": (start + datetime.timedelta(days=number * period)).isoformat(),
            "principalCents": part, "interestCents": interest, "totalCents": part + interest,
            "remainingBalanceCents": balance,
        })
    return entries


def days_between(a: str, b: str) -> int:
    return (datetime.date.fromisoformat(b) - datetime.date.fromisoformat(a)).days


# The aggregates: users (admin and agents), borrowers' accounts, loans, agents' earnings.


class User(Aggregate):
    @staticmethod
    def create_id(user_id: str) -> UUID:
        return uuid5(NAMESPACE_URL, f"/users/{user_id}")

    @event("Registered")
    def __init__(self, user_id: str, username: str, email: str, role: str):
        self.user_id = user_id
        self.role = role
        self.status = "APPROVED" if role == "ADMIN" else "PENDING"

    @event("AgentApproved")
    def approve(self, approved_by: str) -> None:
        self.status = "APPROVED"


class Account(Aggregate):
    @staticmethod
    def create_id(account_id: str) -> UUID:
        return uuid5(NAMESPACE_URL, f"/accounts/{account_id}")

    @event("Opened")
    def __init__(self, account_id: str, name: str, phone: str, address: str, assigned_agent_id: str):
        self.account_id = account_id
        self.assigned_agent_id = assigned_agent_id
        self.status = "ACTIVE"


class Earnings(Aggregate):
    @staticmethod
    def create_id(agent_id: str) -> UUID:
        return uuid5(NAMESPACE_URL, f"/earnings/{agent_id}")

    @event("Started")
    def __init__(self, agent_id: str):
        self.agent_id = agent_id
        self.earned_cents = 0

    @event("CommissionEarned")
    def earn(self, loan_id: str, payment_id: str, interest_cents: int, rate_bp: int, commission_cents: int) -> None:
        self.earned_cents += commission_cents


class Loan(Aggregate):
    @staticmethod
    def create_id(loan_id: str) -> UUID:
        return uuid5(NAMESPACE_URL, f"/loans/{loan_id}")

    @event("Requested")
    def __init__(
        self, loan_id: str, account_id: str, agent_id: str, principal_cents: int, monthly_rate_bp: int,
        tenure_months: int, frequency: str, interest_method: str, requested_on: str, requested_by: str,
    ):
        self.loan_id = loan_id
        self.agent_id = agent_id
        self.principal_cents = principal_cents
        self.monthly_rate_bp = monthly_rate_bp
        self.tenure_months = tenure_months
        self.frequency = frequency
        self.requested_on = requested_on
        self.status = "PENDING_APPROVAL"
        self.approved_on = None
        self.installments: list = []
        self.payment_ids: set = set()
        self.last_paid_on = None

    def approve(self, admin: str, approved_on: str) -> None:
        if self.status != "PENDING_APPROVAL":
            raise Rejected(f"loan {self.loan_id} is {self.status}")
        if approved_on < self.requested_on:
            raise Rejected("approved before the request")
        entries = schedule(self.principal_cents, self.monthly_rate_bp, self.tenure_months, self.frequency, approved_on)
        self._approved(approved_by=admin, approved_on=approved_on, schedule=entries)

    @event("Approved")
    def _approved(self, approved_by: str, approved_on: str, schedule: list) -> None:
        self.status = "ACTIVE"
        self.approved_on = approved_on
        self.installments = [
            {"number": e["number"], "dueDate": e["dueDate"], "principal": e["principalCents"],
             "interest": e["interestCents"], "principalPaid": 0, "interestPaid": 0, "penaltyAccrued": 0,
             "penaltyPaid": 0, "lastAccrual": None}
            for e in schedule
        ]

    def receive_payment(self, payment_id: str, amount: int, paid_on: str, method: str, received_by: str) -> int:
        """Allocates `amount` as Strata's PaymentAllocator does; returns the interest paid."""
        if self.status != "ACTIVE":
            raise Rejected(f"loan {self.loan_id} is {self.status}")
        if payment_id in self.payment_ids:
            raise Rejected(f"payment {payment_id} is already recorded")
        if paid_on < self.approved_on or (self.last_paid_on and paid_on < self.last_paid_on):
            raise Rejected("payment dated out of order")
        accrued = []
        for i in self.installments:
            unpaid = i["principal"] - i["principalPaid"] + i["interest"] - i["interestPaid"]
            days = days_between(max(i["dueDate"], i["lastAccrual"] or i["dueDate"]), paid_on)
            accrued.append(divide(unpaid * days, 1000) if days > 0 and unpaid > 0 else 0)
        owed = sum(self._owed(i) + a for i, a in zip(self.installments, accrued))
        if amount > owed:
            raise Rejected(f"{amount} is more than the {owed} owed")

        remaining = amount
        total = {"penaltyCents": 0, "interestCents": 0, "principalCents": 0}
        parts = []
        owed_after = 0
        oldest_unpaid = next(
            (n for n, (i, a) in enumerate(zip(self.installments, accrued)) if self._owed(i) + a > 0), None)
        oldest_settled = True
        for n, (i, a) in enumerate(zip(self.installments, accrued)):
            penalty = min(remaining, i["penaltyAccrued"] - i["penaltyPaid"] + a)
            remaining -= penalty
            interest = min(remaining, i["interest"] - i["interestPaid"])
            remaining -= interest
            principal = min(remaining, i["principal"] - i["principalPaid"])
            remaining -= principal
            left = self._owed(i) + a - penalty - interest - principal
            owed_after += left
            if n == oldest_unpaid:
                oldest_settled = left == 0
            total["penaltyCents"] += penalty
            total["interestCents"] += interest
            total["principalCents"] += principal
            if a > 0 or penalty + interest + principal > 0:
                parts.append({"number": i["number"], "penaltyAccruedCents": a, "penaltyCents": penalty,
                              "interestCents": interest, "principalCents": principal})
        if owed_after == 0:
            kind = "FULL"
        elif total["interestCents"] == 0 and total["principalCents"] == 0:
            kind = "PENALTY"
        else:
            kind = "REGULAR" if oldest_settled else "PARTIAL"
        self._payment_received(
            payment_id=payment_id, loan_id=self.loan_id, amount_cents=amount, paid_on=paid_on, method=method,
            received_by=received_by, type=kind, allocation=total, per_installment=parts,
            outstanding_after_cents=owed_after)
        if owed_after == 0:
            self._closed(closed_on=paid_on, payment_id=payment_id)
        return total["interestCents"]

    @staticmethod
    def _owed(i: dict) -> int:
        return (i["principal"] - i["principalPaid"] + i["interest"] - i["interestPaid"]
                + i["penaltyAccrued"] - i["penaltyPaid"])

    @event("PaymentReceived")
    def _payment_received(
        self, payment_id: str, loan_id: str, amount_cents: int, paid_on: str, method: str, received_by: str,
        type: str, allocation: dict, per_installment: list, outstanding_after_cents: int,
    ) -> None:
        by_number = {i["number"]: i for i in self.installments}
        for part in per_installment:
            i = by_number[part["number"]]
            i["penaltyAccrued"] += part["penaltyAccruedCents"]
            i["penaltyPaid"] += part["penaltyCents"]
            i["interestPaid"] += part["interestCents"]
            i["principalPaid"] += part["principalCents"]
        for i in self.installments:
            i["lastAccrual"] = paid_on
        self.payment_ids.add(payment_id)
        self.last_paid_on = paid_on

    @event("Closed")
    def _closed(self, closed_on: str, payment_id: str) -> None:
        self.status = "CLOSED"


class Lending(Application):
    def actor(self, user_id: str, roles: tuple) -> User:
        user = self.repository.get(User.create_id(user_id))
        if user.role not in roles or user.status != "APPROVED":
            raise Rejected(f"{user_id} may not do this")
        return user

    def request_loan(self, actor: str, loan_id: str, account_id: str, principal: int, rate_bp: int,
                     tenure: int, frequency: str, requested_on: str) -> None:
        user = self.actor(actor, ("ADMIN", "AGENT"))
        account = self.repository.get(Account.create_id(account_id))
        if user.role == "AGENT" and account.assigned_agent_id != actor:
            raise Rejected(f"account {account_id} is assigned to another agent")
        if account.status != "ACTIVE":
            raise Rejected(f"account {account_id} is {account.status}")
        self.save(Loan(
            loan_id=loan_id, account_id=account_id, agent_id=account.assigned_agent_id, principal_cents=principal,
            monthly_rate_bp=rate_bp, tenure_months=tenure, frequency=frequency, interest_method="REDUCING",
            requested_on=requested_on, requested_by=actor))

    def approve_loan(self, actor: str, loan_id: str, approved_on: str) -> None:
        self.actor(actor, ("ADMIN",))
        loan = self.repository.get(Loan.create_id(loan_id))
        loan.approve(actor, approved_on)
        self.save(loan)

    def receive_payment(self, actor: str, payment_id: str, loan_id: str, amount: int, paid_on: str,
                        method: str) -> None:
        user = self.actor(actor, ("ADMIN", "AGENT"))
        loan = self.repository.get(Loan.create_id(loan_id))
        if user.role == "AGENT" and loan.agent_id != actor:
            raise Rejected(f"loan {loan_id} belongs to another agent")
        interest = loan.receive_payment(payment_id, amount, paid_on, method, actor)
        commission = divide(interest * COMMISSION_RATE_BP, 10_000)
        if commission > 0:
            earnings = self.repository.get(Earnings.create_id(loan.agent_id))
            earnings.earn(loan_id=loan_id, payment_id=payment_id, interest_cents=interest,
                          rate_bp=COMMISSION_RATE_BP, commission_cents=commission)
            self.save(loan, earnings)
        else:
            self.save(loan)


def agent_id(n: int) -> str:
    return f"p-agent-{n}"


def account_id(n: int) -> str:
    return f"p-acct-{n}"


def setup(app: Lending) -> None:
    app.save(User(user_id=ADMIN, username=ADMIN, email=f"{ADMIN}@bench.example.com", role="ADMIN"))
    for n in range(AGENTS):
        agent = User(user_id=agent_id(n), username=f"p-agent{n}", email=f"{agent_id(n)}@agents.example.com",
                     role="AGENT")
        agent.approve(approved_by=ADMIN)
        app.save(agent, Earnings(agent_id=agent_id(n)))
    for n in range(AGENTS * ACCOUNTS_PER_AGENT):
        app.save(Account(account_id=account_id(n), name=f"Borrower {n}", phone=f"+9198450{100_000 + n % 900_000}",
                         address=f"{n % 97 + 1} Market Road, Mysuru", assigned_agent_id=agent_id(n % AGENTS)))


def run_loan(app: Lending, loan: int, today: str) -> None:
    """Loan `loan` of Strata's LendingWorkload: the same numbers, the same three commands."""
    account = loan % (AGENTS * ACCOUNTS_PER_AGENT)
    agent = agent_id(account % AGENTS)
    loan_id = f"p-loan-{loan}"
    principal = (10_000 + (loan * 7919) % 490_000) * 100
    app.request_loan(agent, loan_id, account_id(account), principal, 300 + loan % 201, 2 + loan % 11,
                     FREQUENCIES[loan % 3], today)
    app.approve_loan(ADMIN, loan_id, today)
    app.receive_payment(agent, f"{loan_id}-p1", loan_id, principal // 20, today, PAYMENT_METHODS[loan % 3])


def journal_settings(app: Lending) -> tuple:
    """SQLite's synchronous level and journal mode on a connection of the library's own pool."""
    with app.recorder.datastore.transaction(commit=False) as cursor:
        cursor.execute("PRAGMA synchronous")
        level = cursor.fetchone()[0]
        cursor.execute("PRAGMA journal_mode")
        mode = cursor.fetchone()[0]
    return {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(level, str(level)), mode


def settings(path: str, loans: int) -> dict:
    """The library's SQLite persistence in a file, and its aggregate cache large enough for
    every aggregate of the run. The cache hands out its own objects (no deep copy): every
    command checks all it refuses on before it triggers an event, so a refused command
    leaves no half-changed aggregate behind."""
    return {
        "PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": path,
        "AGGREGATE_CACHE_MAXSIZE": str(loans + 1000), "DEEPCOPY_FROM_AGGREGATE_CACHE": "n",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loans", type=int, default=10_000)
    parser.add_argument("--dir", help="where to put the SQLite file (default: a new temporary directory)")
    arguments = parser.parse_args()
    if arguments.loans < 1:
        parser.error("--loans must be at least 1")

    directory = arguments.dir or tempfile.mkdtemp(prefix="strata-peer-")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"eventsourcing-{os.getpid()}.db")
    try:
        app = Lending(env=settings(path, arguments.loans))
        synchronous, journal = journal_settings(app)
        if synchronous not in ("FULL", "EXTRA"):
            print(f"lending.py: SQLite synchronous is {synchronous}, not FULL: the peer would not be durable",
                  file=sys.stderr)
            return 2
        today = datetime.date.today().isoformat()
        setup(app)
        first_event = app.recorder.max_notification_id() or 0
        start = time.perf_counter()
        for loan in range(arguments.loans):
            run_loan(app, loan, today)
        elapsed = time.perf_counter() - start
        events = (app.recorder.max_notification_id() or 0) - first_event
        app.close()
    finally:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.unlink(path + suffix)
        if not arguments.dir:
            shutil.rmtree(directory, ignore_errors=True)

    operations = 3 * arguments.loans
    print(json.dumps({
        "peer": "eventsourcing", "version": importlib.metadata.version("eventsourcing"),
        "python": sys.version.split()[0], "sqlite": sqlite3.sqlite_version, "journalMode": journal,
        "synchronous": synchronous, "aggregateCache": True, "loans": arguments.loans, "operations": operations,
        "events": events, "microseconds": int(elapsed * 1e6), "operationsPerSecond": int(operations / elapsed + 0.5),
        "eventsPerSecond": int(events / elapsed + 0.5),
    }, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
