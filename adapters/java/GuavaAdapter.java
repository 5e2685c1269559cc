// ratelab's adapter (docs/exec-protocol.md) for Guava's RateLimiter, one per key, on ratelab's
// virtual clock:
//
//   ratelab check --exec adapters/java/guava-ratelimiter --model token-bucket
//
// RateLimiter reads the time through a SleepingStopwatch, a package-private class of
// com.google.common.util.concurrent; this class lives in that package (on the class path, beside
// Guava's jar) so that its stopwatch can read the instant ratelab sends. tryAcquire never
// sleeps, so the stopwatch's sleep is never called.
//
// The limiter is the one RateLimiter.create(r) makes, SmoothBursty, with the burst asked for:
// create(r) stores up to one second of unused permits (maxBurstSeconds 1) and admits one more
// request on credit whenever the previous one's debt is paid, so it takes bursts of r + 1. For
// --model token-bucket with burst B and one token every T, the adapter makes SmoothBursty with
// rate 1/T and maxBurstSeconds (B - 1) T, which takes bursts of B. A key's RateLimiter is made at
// its first request, as an application's map of limiters would make it.
package com.google.common.util.concurrent;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class GuavaAdapter {
  // The instant of the decision being made, in microseconds since 1970: what Guava reads.
  static final class VirtualStopwatch extends RateLimiter.SleepingStopwatch {
    long micros;

    @Override
    protected long readMicros() {
      return micros;
    }

    @Override
    protected void sleepMicrosUninterruptibly(long micros) {
      if (micros > 0) throw new IllegalStateException("tryAcquire asked to sleep " + micros + " us");
    }
  }

  static final class Limiter {
    final double permitsPerSecond;
    final double maxBurstSeconds;
    final VirtualStopwatch clock = new VirtualStopwatch();
    Map<String, RateLimiter> byKey = new HashMap<>();

    Limiter(String message) {
      String algorithm = text(message, "algorithm");
      if (!"token-bucket".equals(algorithm) && !"token-bucket-credit".equals(algorithm)) {
        throw new IllegalArgumentException("Guava's RateLimiter is a token bucket that admits "
            + "any cost on credit (--model token-bucket-credit; token-bucket where every "
            + "request costs 1), not " + algorithm);
      }
      double intervalSeconds = number(message, "interval_ns") / 1e9;
      permitsPerSecond = 1 / intervalSeconds;
      maxBurstSeconds = (number(message, "burst") - 1) * intervalSeconds;
    }

    boolean decide(String key, int cost) {
      RateLimiter limiter = byKey.get(key);
      if (limiter == null) {
        limiter = new SmoothRateLimiter.SmoothBursty(clock, maxBurstSeconds);
        limiter.setRate(permitsPerSecond);
        byKey.put(key, limiter);
      }
      return limiter.tryAcquire(cost);
    }
  }

  // ratelab's messages are flat JSON objects (the policy nests one more, with distinct names),
  // so a field is found by its name. A key is kept as sent, escapes and all: it only names a
  // limiter.
  static final Map<String, Pattern> patterns = new HashMap<>();

  // The value of `field` in `message`, of the form `value` (a regular expression with one group).
  static String find(String message, String field, String value) {
    Matcher m = patterns.computeIfAbsent(field + value,
        k -> Pattern.compile("\"" + field + "\":" + value)).matcher(message);
    return m.find() ? m.group(1) : null;
  }

  static String text(String message, String field) {
    return find(message, field, "\"((?:[^\"\\\\]|\\\\.)*)\"");
  }

  static double number(String message, String field) {
    String value = find(message, field, "(-?[0-9.eE+-]+)");
    if (value == null) throw new IllegalArgumentException("the message has no " + field);
    return Double.parseDouble(value);
  }

  static long whole(String message, String field) {
    String value = find(message, field, "(-?[0-9]+)");
    if (value == null) throw new IllegalArgumentException("the message has no " + field);
    return Long.parseLong(value);
  }

  // The Bundle-Version of the jar Guava was loaded from (31.1.0.jre in Debian 12).
  static String guavaVersion() throws Exception {
    String jar = RateLimiter.class.getProtectionDomain().getCodeSource().getLocation().getPath();
    try (JarFile file = new JarFile(jar)) {
      return file.getManifest().getMainAttributes().getValue("Bundle-Version");
    }
  }

  static String quoted(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    Map<Long, Limiter> limiters = new HashMap<>();
    for (String line; (line = in.readLine()) != null; ) {
      StringBuilder answer = new StringBuilder("{\"id\":").append(whole(line, "id"));
      String op = text(line, "op");
      try {
        switch (op) {
          case "hello" -> answer.append(",\"version\":1,\"name\":")
              .append(quoted("guava " + guavaVersion() + " RateLimiter"))
              .append(",\"supports\":[],\"resolution_ns\":1000");
          case "open" -> limiters.put(whole(line, "limiter"), new Limiter(line));
          case "restart" -> limiters.get(whole(line, "limiter")).byKey = new HashMap<>();
          case "close" -> limiters.remove(whole(line, "limiter"));
          case "decide" -> {
            Limiter limiter = limiters.get(whole(line, "limiter"));
            limiter.clock.micros = Math.floorDiv(whole(line, "now_ns"), 1000);
            boolean allowed = limiter.decide(text(line, "key"), (int) whole(line, "cost"));
            answer.append(",\"allowed\":").append(allowed);
          }
          case "bye" -> {
            return;
          }
          default -> answer.append(",\"error\":").append(quoted("no op " + op));
        }
      } catch (IllegalArgumentException e) {
        answer.append(",\"error\":").append(quoted(String.valueOf(e.getMessage())));
      }
      out.print(answer.append("}\n"));
      // Answers go out together once the messages sent together are read: ratelab waits for
      // one only after it has written them all.
      if (!in.ready()) out.flush();
    }
  }
}
