#!/usr/bin/env python3
"""history_check: reads the history a proof recorded and checks it against a model.

  history_check.py --model MODEL FILE...

A history is a file of JSON lines, one operation each, appended by the processes of a proof
(each line is written with one O_APPEND write, so lines never mix):

  {"t": 1764371234123456789, "p": "4711", "type": "ok", "f": "enter", "obj": "counter",
   "token": "ab12...", "fence": 1795907158846268}

  t      wall time in nanoseconds when the process saw the operation happen
  p      the process (any string)
  type   invoke (about to ask), ok (it happened), fail (it surely did not), info (unknown)
  f      the operation: enter / exit (a hold's first and last moment, recorded by the command
         inside the lock, semaphore or leadership: both lie within the real hold), write (to
         a fenced store, ok if the store took it, fail if it refused it), push, deliver,
         complete (a queue's message, `id` or `value` naming it)
  token, fence, term, id, value: as the operation has them (id: a candidate's, or a message's)

Models (--model):
  lock       holds never overlap; a hold that began after another ended has a higher fence
  fence      a hold that began after another ended has a higher fence (overlaps allowed: what
             a fenced store relies on when two holders may overlap)
  rwlock     a writer's hold (obj "writer") overlaps no other hold; readers' (obj "reader")
             may overlap each other; a hold that began after another ended has a higher fence
  sem:N      never more than N holds at once
  elect      one leader per term; leaderships never overlap; a later term is higher
  store      the fenced store never took a write whose fence is below one it took earlier
  queue      every acknowledged push was completed at least once; nothing completed that
             was never pushed
  rate:R:B   rate decisions (f "allow": ok allowed, fail denied, `start` the time it was asked)
             allow at most B + R x T (+1, for the server clock's microseconds) within any T
             seconds: R a rate per second, B the burst

It prints one JSON object: {"model", "operations", "holds", "anomalies": count, "worst": the
worst anomalies as text, the longest overlaps first}, and exits 1 when it found an anomaly, 2
on a history it cannot read (a line that is not JSON, an enter without its exit...).
"""

import argparse
import json
import re
import sys


class Unreadable(Exception):
    pass


def read_history(path):
    ops = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                op = json.loads(line)
            except json.JSONDecodeError as e:
                raise Unreadable(f"{path}:{number}: not JSON ({e})") from None
            for field in ("t", "p", "type", "f"):
                if field not in op:
                    raise Unreadable(f"{path}:{number}: no '{field}'")
            ops.append(op)
    return ops


def holds_of(ops):
    """Pairs each `enter` with the `exit` of the same process and token: one hold each.

    An enter with no exit is a hold still open at the end of the history (the command was
    killed inside it): it counts as lasting to the end."""
    open_holds = {}
    holds = []
    end = ops[-1]["t"] if ops else 0
    for op in ops:
        if op["type"] != "ok" or op["f"] not in ("enter", "exit"):
            continue
        key = (op["p"], op.get("token"))
        if op["f"] == "enter":
            if key in open_holds:
                raise Unreadable(f"process {op['p']} entered twice without an exit")
            open_holds[key] = op
        else:
            enter = open_holds.pop(key, None)
            if enter is None:
                raise Unreadable(f"process {op['p']} exited a hold it never entered")
            holds.append(dict(enter, start=enter["t"], end=op["t"]))
    for enter in open_holds.values():
        holds.append(dict(enter, start=enter["t"], end=end, unfinished=True))
    holds.sort(key=lambda h: h["start"])
    return holds


def overlaps(holds, limit):
    """The episodes in which more than `limit` holds were open at once (a sweep over their
    ends), each with how long it lasted and the most holds open at once in it."""
    events = sorted([(h["start"], 1, i) for i, h in enumerate(holds)] +
                    [(h["end"], -1, i) for i, h in enumerate(holds)],
                    key=lambda e: (e[0], e[1]))  # an exit before an enter at the same ns
    inside, found = set(), []
    episode = None  # [since, most at once, who was inside at its peak]
    for t, step, i in events:
        if step > 0:
            inside.add(i)
            if len(inside) > limit and (episode is None or len(inside) > episode[1]):
                names = ", ".join(f"{holds[j]['p']} from {holds[j]['start']}" for j in sorted(inside))
                episode = [episode[0] if episode else t, len(inside), names]
            continue
        inside.discard(i)
        if episode is not None and len(inside) <= limit:
            found.append(f"{episode[1]} holds at once for {(t - episode[0]) / 1e6:.0f} ms at "
                         f"{episode[0]} (limit {limit}): {episode[2]}")
            episode = None
    return found


def increasing(holds, field):
    """A hold that began after another ended must carry a higher `field` (fence or term)."""
    found = []
    highest_ended = None  # the hold with the highest field among those ended so far
    ended = sorted(holds, key=lambda h: h["end"])
    i = 0
    for hold in holds:  # by start
        while i < len(ended) and ended[i]["end"] < hold["start"]:
            e = ended[i]
            if field in e and (highest_ended is None or e[field] > highest_ended[field]):
                highest_ended = e
            i += 1
        if field in hold and highest_ended is not None and hold[field] <= highest_ended[field]:
            found.append(f"{field} {hold[field]} of {hold['p']} (from {hold['start']}) is not "
                         f"above {highest_ended[field]} of {highest_ended['p']}, which ended "
                         f"at {highest_ended['end']}")
    return found


def check_lock(ops):
    holds = holds_of(ops)
    return holds, overlaps(holds, 1) + increasing(holds, "fence")


def check_rwlock(ops):
    holds = holds_of(ops)
    found = []
    for i, w in enumerate(holds):
        if w.get("obj") != "writer":
            continue
        for j, other in enumerate(holds):
            if j != i and other["start"] < w["end"] and w["start"] < other["end"]:
                both = (min(w["end"], other["end"]) - max(w["start"], other["start"])) / 1e6
                found.append(f"writer {w['p']} (from {w['start']}) overlaps {other.get('obj')} "
                             f"{other['p']} (from {other['start']}) for {both:.0f} ms")
    return holds, found + increasing(holds, "fence")


def check_fence(ops):
    holds = holds_of(ops)
    return holds, increasing(holds, "fence")


def check_sem(ops, limit):
    holds = holds_of(ops)
    return holds, overlaps(holds, limit)


def who(hold):
    """The candidate a hold belongs to: its id, else its token, else its process."""
    return hold.get("id") or hold.get("token") or hold["p"]


def check_elect(ops):
    holds = holds_of(ops)
    found = overlaps(holds, 1) + increasing(holds, "term")
    leaders = {}
    for hold in holds:
        term = hold.get("term")
        if term is None:
            continue
        other = leaders.setdefault(term, hold)
        if other is not hold and who(other) != who(hold):
            found.append(f"term {term} had two leaders: {other['p']} and {hold['p']}")
    return holds, found


def check_store(ops):
    found = []
    highest = None
    for op in ops:
        if op["f"] != "write" or op["type"] != "ok":
            continue
        if highest is not None and op["fence"] < highest["fence"]:
            found.append(f"the store took fence {op['fence']} from {op['p']} at {op['t']} after "
                         f"fence {highest['fence']} from {highest['p']}")
        if highest is None or op["fence"] > highest["fence"]:
            highest = op
    return [], found


def check_queue(ops):
    def name(op):
        return op.get("id", op.get("value"))

    pushed = {name(op) for op in ops if op["f"] == "push" and op["type"] in ("invoke", "ok")}
    acked = {name(op) for op in ops if op["f"] == "push" and op["type"] == "ok"}
    completed = {name(op) for op in ops if op["f"] == "complete" and op["type"] == "ok"}
    found = [f"message {m} was acknowledged as pushed and never completed"
             for m in sorted(acked - completed, key=str)]
    found += [f"message {m} was completed but never pushed"
              for m in sorted(completed - pushed, key=str)]
    return [op for op in ops if op["f"] == "complete" and op["type"] == "ok"], found


def check_rate(ops, rate, burst):
    """Each allowed decision was made between its `start` and its `t`; a span [a, b] that holds
    more whole decisions than burst + rate x (b - a), +1, is an anomaly (reported once per a)."""
    allowed = sorted((op["start"], op["t"], op["p"]) for op in ops
                     if op["f"] == "allow" and op["type"] == "ok")
    found = []
    for i, (a, _, p) in enumerate(allowed):
        ends = sorted(e for _, e, _ in allowed[i:])  # the decisions asked at a or later
        for count, b in enumerate(ends, 1):
            if count > burst + rate * (b - a) / 1e9 + 1:
                found.append(f"{count} allowed within {(b - a) / 1e6:.1f} ms from {p}'s at "
                             f"{a} (at most {burst} + {rate:g}/s)")
                break
    return [{"start": a, "end": e, "p": p} for a, e, p in allowed], found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("history", nargs="+", help="one or more files, read as one history")
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    try:
        ops = sorted((op for path in args.history for op in read_history(path)),
                     key=lambda op: op["t"])
        model = args.model
        if model == "lock":
            holds, found = check_lock(ops)
        elif model == "fence":
            holds, found = check_fence(ops)
        elif model == "rwlock":
            holds, found = check_rwlock(ops)
        elif model.startswith("sem:") and model[4:].isdigit():
            holds, found = check_sem(ops, int(model[4:]))
        elif model == "elect":
            holds, found = check_elect(ops)
        elif model == "store":
            holds, found = check_store(ops)
        elif model == "queue":
            holds, found = check_queue(ops)
        elif model.startswith("rate:") and len(model.split(":")) == 3:
            _, rate, burst = model.split(":")
            holds, found = check_rate(ops, float(rate), int(burst))
        else:
            raise Unreadable(f"no model '{model}' (lock, fence, rwlock, sem:N, elect, store, queue, rate:R:B)")
    except (Unreadable, KeyError, TypeError, ValueError, OSError) as e:
        print(f"history_check: {e}", file=sys.stderr)
        return 2
    # The worst first: the longest episode of too many holds, then the others as found.
    def lasted(anomaly):
        m = re.search(r" for (\d+) ms\b", anomaly)
        return -int(m.group(1)) if m else 0
    worst = sorted(found, key=lasted)
    print(json.dumps({"model": args.model, "operations": len(ops), "holds": len(holds),
                      "anomalies": len(found), "worst": worst[:5]}))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
