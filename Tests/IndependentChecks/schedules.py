#!/usr/bin/env python3
"""An independent implementation of DOMAIN.md's amortization schedule rules.

Run by Tests/DomainTests/AmortizationScheduleTests.swift to cross-check the Swift
calculator. Standard library only; this folder is not a SwiftPM target.

stdin:  a JSON array of loans, each
        {"principalCents", "monthlyRateBp", "tenureMonths",
         "frequency": "WEEKLY"|"BI_MONTHLY"|"MONTHLY",
         "interestMethod": "REDUCING"|"FLAT", "approvedOn": "YYYY-MM-DD"}
stdout: a JSON array with one schedule per loan, in order; a schedule is an array of
        {"number", "dueDate", "principalCents", "interestCents", "totalCents",
         "remainingBalanceCents"}.

The rules, as DOMAIN.md ("Loans", "Schedule") states them:
- period days d = 7 / 15 / 30; n = ceil(tenureMonths * 30 / d);
  r = monthlyRateBp / 10000 * d / 30.
- REDUCING: A = P*r*(1+r)^n / ((1+r)^n - 1) computed in floating point (a C double,
  which a Python float is) and rounded to a cent; each installment's interest =
  round(balance * monthlyRateBp * d / 300000) exactly; principal = A - interest; the
  last installment takes the whole remaining balance as principal with its own interest.
  Before the last, a principal part is kept within 0…balance (docs/domain.md, Calculators),
  which only a loan of a few cents reaches.
- FLAT: I = round(P * monthlyRateBp * tenureMonths / 10000); interest I // n and
  principal P // n each, the last installment takes both remainders.
- due date i = approvedOn + i * d days; remainingBalance = principal still owed.
Rounding is half away from zero, applied to exact rationals (Fractions).
"""

import datetime
import json
import math
import sys
from fractions import Fraction

PERIOD_DAYS = {"WEEKLY": 7, "BI_MONTHLY": 15, "MONTHLY": 30}


def round_half_away(value):
    """An exact rational (or a float, taken exactly) rounded half away from zero."""
    exact = Fraction(value)
    magnitude = math.floor(abs(exact) + Fraction(1, 2))
    return magnitude if exact >= 0 else -magnitude


def installment_count(tenure_months, days):
    # ceil of an exact rational, never a float division.
    return math.ceil(Fraction(tenure_months * 30, days))


def schedule(loan):
    principal = int(loan["principalCents"])
    rate_bp = int(loan["monthlyRateBp"])
    tenure = int(loan["tenureMonths"])
    days = PERIOD_DAYS[loan["frequency"]]
    method = loan.get("interestMethod", "REDUCING")
    approved_on = datetime.date.fromisoformat(loan["approvedOn"])
    n = installment_count(tenure, days)

    parts = []  # (principal, interest) per installment
    if method == "REDUCING":
        r = rate_bp / 10000 * days / 30
        growth = (1 + r) ** n
        emi = round_half_away(principal * r * growth / (growth - 1))
        balance = principal
        for number in range(1, n + 1):
            interest = round_half_away(Fraction(balance * rate_bp * days, 300000))
            # docs/domain.md: before the last installment a principal part is kept within
            # 0…balance, since A − interest read literally can overpay a loan of a few cents
            # (2 cents at 300 bp over 4 months would pay 1, 1, 1, −1).
            part = balance if number == n else min(max(emi - interest, 0), balance)
            parts.append((part, interest))
            balance -= part
    elif method == "FLAT":
        total_interest = round_half_away(Fraction(principal * rate_bp * tenure, 10000))
        interest_each = total_interest // n
        principal_each = principal // n
        for number in range(1, n + 1):
            if number == n:
                parts.append((principal - principal_each * (n - 1), total_interest - interest_each * (n - 1)))
            else:
                parts.append((principal_each, interest_each))
    else:
        raise ValueError("unknown interestMethod %r" % method)

    entries = []
    balance = principal
    for number, (part, interest) in enumerate(parts, start=1):
        balance -= part
        entries.append({
            "number": number,
            "dueDate": (approved_on + datetime.timedelta(days=number * days)).isoformat(),
            "principalCents": part,
            "interestCents": interest,
            "totalCents": part + interest,
            "remainingBalanceCents": balance,
        })
    return entries


def main():
    loans = json.load(sys.stdin)
    json.dump([schedule(loan) for loan in loans], sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
