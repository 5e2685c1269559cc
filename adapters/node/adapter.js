#!/usr/bin/env node
// ratelab's adapter (docs/exec-protocol.md) for two Node.js limiters, in process memory:
//
//   ratelab check --exec 'adapters/node/adapter.js rate-limiter-flexible' --model anchored-window
//   ratelab check --exec 'adapters/node/adapter.js limiter' --model token-bucket
//
// rate-limiter-flexible's RateLimiterMemory counts `points` per `duration` in a window opened by
// a key's first request (and reads the time with Date.now(), in whole milliseconds). limiter's
// TokenBucket refills bucketSize tokens at tokensPerInterval per interval (and reads the time
// with performance.now(), in fractions of a millisecond); one bucket a key, made full, as the
// library's RateLimiter makes its own.
//
// Both clocks read the instant ratelab sends. RateLimiterMemory also deletes expired keys with
// setTimeout, on the wall clock: the adapter keeps those timers from firing (a key past its
// expiry is replaced on its next request all the same), so that a run depends on its input alone.
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const readline = require("node:readline");

// The version a package's package.json gives.
const versionOf = (pkg) =>
  JSON.parse(fs.readFileSync(path.join(__dirname, "node_modules", pkg, "package.json"))).version;

let nowNs = 0n;
Date.now = () => Number(nowNs / 1000000n);
performance.now = () => Number(nowNs) / 1e6;
globalThis.setTimeout = () => ({ unref() {}, ref() {}, hasRef: () => false });

const { RateLimiterMemory } = require("rate-limiter-flexible");
const { TokenBucket } = require("limiter");

const LIBRARIES = {
  "rate-limiter-flexible": {
    version: versionOf("rate-limiter-flexible"),
    resolutionNs: 1000000,
    make(policy) {
      if (policy.algorithm !== "anchored-window") {
        throw new Error("RateLimiterMemory counts a window opened by a key's first request " +
                        "(--model anchored-window), not " + policy.algorithm);
      }
      const limiter = new RateLimiterMemory({ points: policy.limit, duration: policy.window_ns / 1e9 });
      return async (key, cost) => {
        try {
          const res = await limiter.consume(key, cost);
          return { allowed: true, remaining: res.remainingPoints };
        } catch (res) {
          if (res instanceof Error) throw res;
          return { allowed: false, remaining: res.remainingPoints };
        }
      };
    },
  },
  limiter: {
    version: versionOf("limiter"),
    resolutionNs: 1000,
    make(policy) {
      if (policy.algorithm !== "token-bucket") {
        throw new Error("TokenBucket is a token bucket (--model token-bucket), not " +
                        policy.algorithm);
      }
      const buckets = new Map();
      return async (key, cost) => {
        let bucket = buckets.get(key);
        if (!bucket) {
          bucket = new TokenBucket({ bucketSize: policy.burst, tokensPerInterval: 1,
                                     interval: policy.interval_ns / 1e6 });
          bucket.content = policy.burst;
          buckets.set(key, bucket);
        }
        const allowed = bucket.tryRemoveTokens(cost);
        return { allowed, remaining: Math.floor(bucket.content) };
      };
    },
  },
};

const name = process.argv[2];
const library = LIBRARIES[name];
if (!library) {
  process.stderr.write("usage: adapter.js " + Object.keys(LIBRARIES).join("|") + "\n");
  process.exit(2);
}

const limiters = new Map();  // number -> {policy, decide}
const answer = (a) => process.stdout.write(JSON.stringify(a) + "\n");

async function handle(line) {
  const m = JSON.parse(line);
  const a = { id: m.id };
  try {
    switch (m.op) {
      case "hello":
        Object.assign(a, { version: 1, name: name + " " + library.version,
                           supports: ["remaining"], resolution_ns: library.resolutionNs });
        break;
      case "open":
        limiters.set(m.limiter, { policy: m.policy, decide: library.make(m.policy) });
        break;
      case "restart": {
        const l = limiters.get(m.limiter);
        l.decide = library.make(l.policy);
        break;
      }
      case "close":
        limiters.delete(m.limiter);
        break;
      case "decide":
        // JSON numbers cannot hold now_ns exactly: read its digits.
        nowNs = BigInt(/"now_ns":(-?\d+)/.exec(line)[1]);
        Object.assign(a, await limiters.get(m.limiter).decide(m.key, m.cost));
        break;
      case "bye":
        process.exit(0);
    }
  } catch (e) {
    a.error = String(e && e.message ? e.message : e);
  }
  answer(a);
}

// One message at a time, in order: each decision sees the state the one before it left.
let queue = Promise.resolve();
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  queue = queue.then(() => handle(line));
});
