#!/usr/bin/python3
"""ratelab's adapter for the Python library `limits` (its memory storage), speaking the line
protocol of docs/exec-protocol.md on stdin and stdout.

    ratelab check --exec adapters/python/limits_adapter.py --model sliding-log-closed

The strategy follows --model (override it with --strategy):
  sliding-log-closed  MovingWindowRateLimiter: an entry counts while now - W <= its time
  anchored-window-half-open  FixedWindowRateLimiter: a window opens at a key's first hit and is
                             gone at exactly W after it (anchored-window, whose window still
                             holds that instant, is taken too: at a 1 us clock they differ only
                             at that tie, which ratelab forgives)
and --strategy fixed-window-elastic-expiry runs FixedWindowElasticExpiryRateLimiter, whose
window moves on with every hit, denied ones too.

The library reads the time with time.time(): the adapter gives its storage module a clock that
reads the instant ratelab sends ("now_ns"), as a float of seconds, as time.time() would be.
"""
import argparse
import json
import sys

import limits
import limits.storage.memory as memory
from limits.storage import MemoryStorage
from limits.strategies import (FixedWindowElasticExpiryRateLimiter, FixedWindowRateLimiter,
                               MovingWindowRateLimiter)


class VirtualTime:
    """Stands in for the time module in limits' memory storage: time() is ratelab's now."""

    def __init__(self):
        self.now = 0.0

    def time(self):
        return self.now


CLOCK = VirtualTime()
memory.time = CLOCK

STRATEGIES = {
    "moving-window": MovingWindowRateLimiter,
    "fixed-window": FixedWindowRateLimiter,
    "fixed-window-elastic-expiry": FixedWindowElasticExpiryRateLimiter,
}
BY_MODEL = {"sliding-log-closed": "moving-window", "anchored-window-half-open": "fixed-window",
            "anchored-window": "fixed-window"}


def new_storage():
    storage = MemoryStorage()
    # Its housekeeping thread deletes, on the wall clock, what has expired on ratelab's: entries
    # every decision already ignores. Stopped, so that a run depends on its input alone.
    storage.timer.cancel()
    storage._MemoryStorage__schedule_expiry = lambda: None
    return storage


class Limiter:
    def __init__(self, policy, strategy):
        window_ns = policy["window_ns"]
        if policy["algorithm"] not in BY_MODEL and strategy is None:
            raise ValueError("limits has no %s; it has the moving window (--model "
                             "sliding-log-closed) and a window opened by a key's first hit "
                             "(--model anchored-window-half-open)" % policy["algorithm"])
        if window_ns % 1_000_000_000 != 0:
            raise ValueError("limits counts windows in whole seconds (the window is %d ns)"
                             % window_ns)
        self.item = limits.RateLimitItemPerSecond(policy["limit"], window_ns // 1_000_000_000)
        self.strategy = STRATEGIES[strategy or BY_MODEL[policy["algorithm"]]]
        self.restart()

    def restart(self):
        self.limiter = self.strategy(new_storage())

    def decide(self, key, cost):
        allowed = self.limiter.hit(self.item, key, cost=cost)
        _, remaining = self.limiter.get_window_stats(self.item, key)
        return {"allowed": allowed, "remaining": max(0, remaining)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strategy", choices=sorted(STRATEGIES))
    args = parser.parse_args()
    limiters = {}
    for line in sys.stdin:
        message = json.loads(line)
        answer = {"id": message["id"]}
        op = message["op"]
        try:
            if op == "hello":
                answer.update(version=1, name="limits %s (%s)" % (
                    limits.__version__, args.strategy or "strategy by --model"),
                    supports=["remaining"], resolution_ns=1000)
            elif op == "open":
                limiters[message["limiter"]] = Limiter(message["policy"], args.strategy)
            elif op == "restart":
                limiters[message["limiter"]].restart()
            elif op == "close":
                limiters.pop(message["limiter"], None)
            elif op == "decide":
                CLOCK.now = message["now_ns"] / 1e9
                answer.update(limiters[message["limiter"]].decide(message["key"], message["cost"]))
            elif op == "bye":
                return
        except (ValueError, KeyError) as e:
            answer["error"] = str(e)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
