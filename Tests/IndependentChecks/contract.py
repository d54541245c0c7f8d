"""The commands endpoint checked from CONTRACT.md alone, with pyzmq and no code shared with Strata.

Run against a running `strata serve` whose data directory has the keys `svc` (commands and
history), `hist-only` (history) and `agents-only` (commands, narrowed to AGENT) and the admin
`root`. Environment: STRATA_DATA, STRATA_COMMANDS. Prints one JSON line
{"ok":…,"checks":N,"failures":[…]} and exits 0 when every check held, 1 otherwise.

Each request is built to break several rules at once, so that the code in the reply shows which
one the service judged first: the contract's order is MALFORMED and TOO_LARGE, UNAUTHENTICATED,
FORBIDDEN (scope), INVALID, FORBIDDEN (role or status), NOT_FOUND, FORBIDDEN (ownership),
CONFLICT, REJECTED.
"""
import hashlib
import hmac
import json
import os
import sys
import time

import zmq

DATA = os.environ["STRATA_DATA"]
ENDPOINT = os.environ["STRATA_COMMANDS"]
KEYS = {k["id"]: k for k in json.load(open(os.path.join(DATA, "keys.json")))["keys"]}
CONTEXT = zmq.Context.instance()
TODAY = time.strftime("%Y-%m-%d", time.gmtime())
RUN = "cc%d" % os.getpid()
checks = 0
failures = []


def header(body, key="svc", ts=None, sig=None):
    ts = int(time.time()) if ts is None else ts
    signed = b"strata-v1\n%d\n%s\n" % (ts, key.encode()) + body
    sig = sig or hmac.new(bytes.fromhex(KEYS[key]["secret"]), signed, hashlib.sha256).hexdigest()
    return json.dumps({"v": 1, "key": key, "ts": ts, "sig": sig}).encode()


def connect(kind):
    socket = CONTEXT.socket(kind)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(ENDPOINT)
    return socket


DEALER = connect(zmq.DEALER)


def exchange(frames, kind=zmq.DEALER):
    """The reply's frames: a REQ socket of its own for REQ, else the one DEALER."""
    socket = connect(kind) if kind == zmq.REQ else DEALER
    socket.send_multipart(frames)
    if not socket.poll(15_000):
        raise TimeoutError("no reply to %r" % frames[-1][:80])
    reply = socket.recv_multipart()
    if kind == zmq.REQ:
        socket.close()
    return reply


def send(body, key="svc", ts=None, sig=None, kind=zmq.DEALER):
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    h = header(body, key, ts, sig)
    reply = exchange([b"", h, body] if kind == zmq.DEALER else [h, body], kind)
    expect(len(reply) == (2 if kind == zmq.DEALER else 1), "reply framing mirrors the request's", reply)
    return json.loads(reply[-1])


def expect(condition, what, detail=None):
    global checks
    checks += 1
    if not condition:
        failures.append({"check": what, "detail": json.dumps(detail)[:400] if detail is not None else None})


def outcome(reply):
    return "OK" if reply.get("ok") else "%s/%s" % (reply["error"]["code"], reply["error"]["reason"])


counter = iter(range(1_000_000))


def command(type, actor, payload, id=None, **extra):
    return {"id": id or "%s-%d" % (RUN, next(counter)), "type": type, "actor": actor, "payload": payload, **extra}


def refused(what, body, wanted, **options):
    """Sends `body` and checks the reply's code (and reason, when `wanted` names one)."""
    reply = send(body, **options)
    got = outcome(reply)
    expect(got == wanted or got.split("/")[0] == wanted, "%s: %s" % (what, wanted), reply)
    return reply


def loan(loan_id, account):
    return {"loanId": loan_id, "accountId": account, "principalCents": 100_000, "monthlyRateBp": 400,
            "tenureMonths": 6, "frequency": "MONTHLY"}


def setup():
    """Two approved agents (one with an account, a pending and an active loan), one pending agent."""
    a1, a2, pending = RUN + "-a1", RUN + "-a2", RUN + "-p"
    account, pending_loan, active_loan = RUN + "-acct", RUN + "-lp", RUN + "-la"
    for body in [
        command("RegisterUser", a1, {"userId": a1, "username": a1, "email": a1 + "@example.com", "role": "AGENT"}),
        command("ApproveAgent", "root", {"agentId": a1}),
        command("RegisterUser", a2, {"userId": a2, "username": a2, "email": a2 + "@example.com", "role": "AGENT"}),
        command("ApproveAgent", "root", {"agentId": a2}),
        command("RegisterUser", pending,
                {"userId": pending, "username": pending, "email": pending + "@example.com", "role": "AGENT"}),
        command("OpenAccount", a1, {"accountId": account, "name": "Asha", "phone": "+919845012345",
                                    "address": "1 Road", "assignedAgentId": a1}),
        command("RequestLoan", a1, loan(active_loan, account)),
        command("ApproveLoan", "root", {"loanId": active_loan}),
        command("RequestLoan", a1, loan(pending_loan, account)),
    ]:
        reply = send(body)
        if not reply.get("ok"):
            raise RuntimeError("set-up refused: %s" % json.dumps(reply))
    return a1, a2, pending, account, pending_loan, active_loan


def precedence(a1, a2, pending, account, pending_loan, active_loan):
    payment = lambda loan_id: {"paymentId": RUN + "-pay", "loanId": loan_id, "amountCents": 100, "paidOn": TODAY}
    nope = RUN + "-nope"
    # Above the payload: the gate.
    refused("a body over 64 KiB with a wrong signature", command("ApproveLoan", "root", {"loanId": "x" * 70_000}),
            "TOO_LARGE/BODY_TOO_LARGE", sig="0" * 64)
    refused("a missing actor with a stale ts", {"id": RUN + "-m1", "type": "ApproveLoan", "payload": {}},
            "MALFORMED/INVALID_ACTOR_FIELD", ts=1)
    refused("an unknown type with a stale ts", command("Frobnicate", "ghost", {}),
            "UNAUTHENTICATED/STALE_TIMESTAMP", ts=int(time.time()) - 400)
    refused("an invalid payload from a history-only key", command("ApproveLoan", pending, {"loanId": "bad id"}),
            "FORBIDDEN/KEY_SCOPE", key="hist-only")
    # INVALID above everything the domain judges.
    refused("an invalid payload from a pending agent about no loan, wrong version",
            command("ApproveLoan", pending, {"loanId": "bad id"}, expectedVersion=7), "INVALID/INVALID_IDENTIFIER")
    refused("an unknown command type from no user", command("Frobnicate", "ghost", {}), "INVALID/UNKNOWN_COMMAND_TYPE")
    refused("an invalid payload through a key for other roles",
            command("ApproveLoan", "root", {"loanId": "bad id"}), "INVALID", key="agents-only")
    reply = refused("every problem listed", command("RequestLoan", pending, {
        "loanId": "bad id", "principalCents": "x", "monthlyRateBp": 1, "tenureMonths": 1.5, "frequency": "DAILY",
        "zzz": 1}), "INVALID")
    fields = [d["field"] for d in reply["error"].get("details", [])]
    expect(set(fields) >= {"loanId", "accountId", "principalCents", "monthlyRateBp", "tenureMonths", "frequency",
                           "zzz"}, "INVALID details list every problem", reply)
    # FORBIDDEN for role or status above NOT_FOUND.
    refused("an agent approving no loan, wrong version",
            command("ApproveLoan", a1, {"loanId": nope}, expectedVersion=4), "FORBIDDEN/ROLE_NOT_ALLOWED")
    refused("a pending agent paying no loan", command("ReceivePayment", pending, payment(nope), expectedVersion=3),
            "FORBIDDEN/ACTOR_NOT_APPROVED")
    refused("no user approving no loan", command("ApproveLoan", "ghost", {"loanId": nope}), "FORBIDDEN/UNKNOWN_ACTOR")
    refused("the admin through an agents-only key, no loan", command("ApproveLoan", "root", {"loanId": nope}),
            "FORBIDDEN/KEY_ROLE_NOT_PERMITTED", key="agents-only")
    refused("the admin as a self-registering agent through an agents-only key", command(
        "RegisterUser", "root", {"userId": "root", "username": RUN + "r", "email": RUN + "r@example.com",
                                 "role": "AGENT"}, expectedVersion=5), "FORBIDDEN/KEY_ROLE_NOT_PERMITTED",
        key="agents-only")
    refused("an agent erasing no subject", command("EraseSubject", a1, {"subjectId": nope, "reason": "r"}),
            "FORBIDDEN/ROLE_NOT_ALLOWED")
    # NOT_FOUND above ownership and CONFLICT.
    refused("no loan, wrong version", command("ApproveLoan", "root", {"loanId": nope}, expectedVersion=4),
            "NOT_FOUND/LOAN_NOT_FOUND")
    refused("another agent paying no loan", command("ReceivePayment", a2, payment(nope), expectedVersion=3),
            "NOT_FOUND/LOAN_NOT_FOUND")
    refused("another agent's loan request on no account",
            command("RequestLoan", a2, loan(active_loan, nope), expectedVersion=5), "NOT_FOUND/ACCOUNT_NOT_FOUND")
    refused("another agent updating no user's profile", command("UpdateProfile", a2, {"userId": nope, "fullName": "X"}),
            "NOT_FOUND/USER_NOT_FOUND")
    # Ownership above CONFLICT and REJECTED.
    refused("another agent paying a loan, wrong version",
            command("ReceivePayment", a2, payment(active_loan), expectedVersion=99), "FORBIDDEN/NOT_LOAN_AGENT")
    refused("another agent requesting an existing loan on an account",
            command("RequestLoan", a2, loan(active_loan, account), expectedVersion=5), "FORBIDDEN/NOT_ASSIGNED_AGENT")
    refused("another agent's profile, wrong version",
            command("UpdateProfile", a2, {"userId": a1, "fullName": "X"}, expectedVersion=99),
            "FORBIDDEN/NOT_OWN_PROFILE")
    # CONFLICT above REJECTED, and expectedVersion on the command's own stream.
    refused("approving an approved loan, wrong version",
            command("ApproveLoan", "root", {"loanId": active_loan}, expectedVersion=1),
            "CONFLICT/WRONG_EXPECTED_VERSION")
    refused("paying a pending loan, wrong version",
            command("ReceivePayment", a1, payment(pending_loan), expectedVersion=7),
            "CONFLICT/WRONG_EXPECTED_VERSION")
    refused("approving an approved loan at its version",
            command("ApproveLoan", "root", {"loanId": active_loan}, expectedVersion=2), "REJECTED/LOAN_NOT_PENDING")
    refused("a new loan at version 0", command("RequestLoan", a1, loan(RUN + "-l0", account), expectedVersion=0), "OK")


def idempotency(a1, a2, account, active_loan):
    def same_reply(first, again):
        return {k: v for k, v in first.items() if k != "duplicate"} == {k: v for k, v in again.items()
                                                                         if k != "duplicate"}

    decided = {
        "accepted": command("RequestLoan", a1, loan(RUN + "-li", account)),
        "INVALID": command("ApproveLoan", "root", {"loanId": "bad id"}),
        "FORBIDDEN": command("ApproveLoan", a1, {"loanId": "x"}),
        "NOT_FOUND": command("ApproveLoan", "root", {"loanId": RUN + "-nope"}),
        "ownership": command("ReceivePayment", a2, {"paymentId": "p", "loanId": active_loan, "amountCents": 1,
                                                    "paidOn": TODAY}),
        "CONFLICT": command("ApproveLoan", "root", {"loanId": active_loan}, expectedVersion=1),
        "REJECTED": command("ApproveLoan", "root", {"loanId": active_loan}),
    }
    for what, body in decided.items():
        raw = json.dumps(body).encode()
        first = send(raw)
        expect(first.get("duplicate") in (None, False), "%s: first reply is no duplicate" % what, first)
        for kind in (zmq.DEALER, zmq.REQ):
            again = send(raw, kind=kind)
            expect(again.get("duplicate") is True and same_reply(first, again),
                   "%s: the same body again is the original reply, duplicate" % what, [first, again])
        other = json.dumps({**body, "correlationId": "changed"}).encode()
        refused("%s: the same id with another body" % what, other, "CONFLICT/COMMAND_ID_REUSED")
    refused("the same body from another key", json.dumps(decided["accepted"]).encode(),
            "CONFLICT/COMMAND_ID_REUSED", key="agents-only")
    # What decides nothing is not remembered: after it, the same id is decided afresh.
    for what, options in [("a stale ts", {"ts": 1}), ("a wrong signature", {"sig": "0" * 64}),
                          ("a key without the scope", {"key": "hist-only"})]:
        raw = json.dumps(command("RequestLoan", a1, loan("%s-l%d" % (RUN, next(counter)), account))).encode()
        first = send(raw, **options)
        expect(first.get("ok") is False, "%s is refused" % what, first)
        again = send(raw)
        expect(again.get("ok") is True and again.get("duplicate") is False, "after %s, decided afresh" % what, again)
    # A byte-identical resend, header and ts included, is a retry.
    raw = json.dumps(command("RequestLoan", a1, loan(RUN + "-lr", account))).encode()
    h = header(raw)
    replies = [json.loads(exchange([b"", h, raw])[-1]) for _ in range(2)]
    expect(replies[0].get("ok") and replies[1].get("duplicate") is True and
           replies[0]["events"] == replies[1]["events"], "a byte-identical resend is answered as a duplicate", replies)


def framing_and_bodies(a1, account):
    body = json.dumps(command("ApproveLoan", "root", {"loanId": RUN + "-nope"})).encode()
    h = header(body)
    for what, frames, kind in [
        ("DEALER without the delimiter", [h, body], zmq.DEALER),
        ("DEALER with a non-empty delimiter", [b"x", h, body], zmq.DEALER),
        ("DEALER with a frame too many", [b"", h, body, b"x"], zmq.DEALER),
        ("DEALER with the body missing", [b"", h], zmq.DEALER),
        ("REQ with a frame too many", [h, body, b"x"], zmq.REQ),
        ("REQ with one frame", [h], zmq.REQ),
    ]:
        reply = json.loads(exchange(frames, kind)[-1])
        expect(outcome(reply) == "MALFORMED/BAD_FRAMES", what, reply)
    for what, raw, wanted in [
        ("invalid UTF-8",
         b'{"id":"%s-u","type":"ApproveLoan","actor":"root","payload":{"loanId":"\xff"}}' % RUN.encode(),
         "MALFORMED/BODY_NOT_JSON"),
        ("a duplicate key",
         b'{"id":"%s-d","type":"ApproveLoan","actor":"root","actor":"x","payload":{}}' % RUN.encode(),
         "MALFORMED/BODY_NOT_JSON"),
        ("not an object", b"[1]", "MALFORMED/BODY_NOT_OBJECT"),
        ("id of the wrong type", b'{"id":5,"type":"ApproveLoan","actor":"root","payload":{}}', "MALFORMED"),
        ("type of the wrong type", b'{"id":"%s-t","type":5,"actor":"root","payload":{}}' % RUN.encode(), "MALFORMED"),
        ("payload missing", b'{"id":"%s-p","type":"ApproveLoan","actor":"root"}' % RUN.encode(), "MALFORMED"),
        ("expectedVersion a string",
         b'{"id":"%s-e","type":"ApproveLoan","actor":"root","payload":{},"expectedVersion":"1"}' % RUN.encode(),
         "MALFORMED"),
        ("expectedVersion beyond 64 bits",
         b'{"id":"%s-e2","type":"ApproveLoan","actor":"root","payload":{},"expectedVersion":1e400}' % RUN.encode(),
         "MALFORMED"),
        ("correlationId a number",
         b'{"id":"%s-c","type":"ApproveLoan","actor":"root","payload":{},"correlationId":5}' % RUN.encode(),
         "MALFORMED"),
        ("a principal beyond 64 bits", json.dumps(command("RequestLoan", a1, {
            **loan(RUN + "-lh", account), "principalCents": 10 ** 30})).encode(), "INVALID/ABOVE_MAXIMUM"),
        ("null for optional fields", json.dumps(command("ApproveLoan", "root", {"loanId": RUN + "-nope",
                                                                               "approvedOn": None},
                                                        expectedVersion=None, correlationId=None)).encode(),
         "NOT_FOUND/LOAN_NOT_FOUND"),
    ]:
        refused(what, raw, wanted)
    # Accepted replies' shape, and a pipelined request and approval of one loan decided in order.
    pipelined = []
    for n in range(20):
        loan_id = "%s-pl%d" % (RUN, n)
        pipelined.append(json.dumps(command("RequestLoan", a1, loan(loan_id, account))).encode())
        pipelined.append(json.dumps(command("ApproveLoan", "root", {"loanId": loan_id}, expectedVersion=1)).encode())
    for raw in pipelined:
        DEALER.send_multipart([b"", header(raw), raw])
    for raw in pipelined:
        reply = json.loads(DEALER.recv_multipart()[-1]) if DEALER.poll(15_000) else {}
        expect(reply.get("id") == json.loads(raw)["id"] and reply.get("ok") is True and reply.get("duplicate") is False,
               "pipelined commands are decided in the order sent", reply)
        events = reply.get("events") or [{}]
        expect(set(events[0]) == {"position", "stream", "version", "type"}, "an accepted reply names its events", reply)


def main():
    a1, a2, pending, account, pending_loan, active_loan = setup()
    precedence(a1, a2, pending, account, pending_loan, active_loan)
    idempotency(a1, a2, account, active_loan)
    framing_and_bodies(a1, account)
    print(json.dumps({"ok": not failures, "checks": checks, "failures": failures}))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
