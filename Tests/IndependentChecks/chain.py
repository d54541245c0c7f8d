#!/usr/bin/env python3
"""An independent check of Strata's hash chain (CONTRACT.md "Integrity").

Run by Tests/ServiceTests/IndependentChainTests.swift over the history the real service
returns. Standard library only (json, hashlib, sys); shares no code with the store. This
folder is not a SwiftPM target.

stdin:  JSON lines, one event per line, as the bus and history carry them:
        {"position", "stream", "version", "type", "schemaVersion", "recordedAt", "data",
         "metadata", "prevHash", "hash"}, starting at position 1.
stdout: one JSON object:
        {"ok": bool, "events": N, "firstPosition": P|null, "lastPosition": P|null,
         "lastHash": "<hex>"|null, "nonCanonicalLines": K, "problems": [...]}
        where each problem is {"line", "position", "kind", "message"} and kind is one of
        json, position, prevHash, hash.
exit:   0 when the chain is intact, 1 on any problem, 2 on a usage error.

The rules, as the contract states them:
- hash = hex SHA-256 of (prevHash as 32 raw bytes || canonical bytes of the event
  without its "hash" and "prevHash" fields);
- canonical bytes: keys sorted, no whitespace, minimal escaping (RFC 8785 for these
  events: ASCII keys, no floating-point numbers), i.e. Python's
  json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) in UTF-8;
- the first event's prevHash is 32 zero bytes; every later prevHash is the hash before;
- positions are 1, 2, 3, ... with no gaps.

A line that is not itself in canonical form is counted in "nonCanonicalLines" (the bus
and history carry canonical JSON) but does not by itself break the chain.
"""

import hashlib
import json
import sys

GENESIS = "0" * 64
MAX_REPORTED = 50


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def reject_duplicates(pairs):
    keys = [key for key, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


def reject_float(text):
    raise ValueError("a floating-point number: " + text)


def is_hex64(value):
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def check(lines):
    problems = []
    previous_hash = GENESIS
    expected_position = 1
    events = 0
    first_position = None
    last_position = None
    last_hash = None
    non_canonical = 0

    def problem(line, position, kind, message):
        problems.append({"line": line, "position": position, "kind": kind, "message": message})

    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(
                raw.decode("utf-8"),
                object_pairs_hook=reject_duplicates,
                parse_float=reject_float,
                parse_constant=reject_float,
            )
            if not isinstance(event, dict):
                raise ValueError("not an object")
        except (UnicodeDecodeError, ValueError) as error:
            problem(number, None, "json", str(error))
            continue

        events += 1
        position = event.get("position")
        if first_position is None:
            first_position = position
        last_position = position
        if canonical(event) != raw:
            non_canonical += 1

        if not isinstance(position, int) or isinstance(position, bool) or position != expected_position:
            problem(number, position, "position", "expected position %d, found %r" % (expected_position, position))
        if isinstance(position, int) and not isinstance(position, bool):
            expected_position = position + 1

        stated_previous = event.get("prevHash")
        stated_hash = event.get("hash")
        if not is_hex64(stated_previous) or not is_hex64(stated_hash):
            problem(number, position, "hash", "prevHash and hash must be 64 lowercase hex characters")
            previous_hash = stated_hash if isinstance(stated_hash, str) else previous_hash
            continue
        if stated_previous != previous_hash:
            problem(number, position, "prevHash", "prevHash %s, but the event before hashed to %s" % (stated_previous, previous_hash))

        body = {key: value for key, value in event.items() if key not in ("hash", "prevHash")}
        computed = hashlib.sha256(bytes.fromhex(stated_previous) + canonical(body)).hexdigest()
        if computed != stated_hash:
            problem(number, position, "hash", "hash %s, recomputed %s" % (stated_hash, computed))
        # Go on from the stated hash, so one bad event is reported once, not for the rest.
        previous_hash = stated_hash
        last_hash = stated_hash

    return {
        "ok": not problems,
        "events": events,
        "firstPosition": first_position,
        "lastPosition": last_position,
        "lastHash": last_hash,
        "nonCanonicalLines": non_canonical,
        "problemCount": len(problems),
        "problems": problems[:MAX_REPORTED],
    }


def main(argv):
    if len(argv) != 1:
        sys.stderr.write("usage: chain.py < events.jsonl\n")
        return 2
    lines = sys.stdin.buffer.read().split(b"\n")
    summary = check(lines)
    sys.stdout.write(json.dumps(summary, sort_keys=True) + "\n")
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
