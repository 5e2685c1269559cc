# A fixed-window limiter in awk, speaking docs/exec-protocol.md: N per aligned window of W,
# counted per key, in whole milliseconds (awk's numbers cannot hold now_ns exactly).
#
#   ratelab check --exec adapters/awk/fixed-window --model fixed-window
#
# Written from docs/exec-protocol.md alone, as a sketch of how little an adapter needs.

# The value of field `name` in the JSON line `line` (a number, or a string without escapes).
function field(line, name,    rest) {
  if (!match(line, "\"" name "\":")) return ""
  rest = substr(line, RSTART + RLENGTH)
  if (substr(rest, 1, 1) == "\"") {
    rest = substr(rest, 2)
    return substr(rest, 1, index(rest, "\"") - 1)
  }
  match(rest, /^[-0-9.eE+]+/)
  return substr(rest, 1, RLENGTH)
}

function answer(text) {
  print text
  fflush()
}

{
  id = field($0, "id")
  op = field($0, "op")
  n = field($0, "limiter")
  if (op == "hello") {
    answer("{\"id\":" id ",\"version\":1,\"name\":\"awk fixed window\",\"supports\":[\"remaining\"],\"resolution_ns\":1000000}")
  } else if (op == "open") {
    limit[n] = field($0, "limit") + 0
    window_ms[n] = int(field($0, "window_ns") / 1000000)
    if (window_ms[n] < 1 || field($0, "algorithm") != "fixed-window") {
      answer("{\"id\":" id ",\"error\":\"this toy counts fixed windows of whole milliseconds\"}")
    } else {
      answer("{\"id\":" id "}")
    }
  } else if (op == "restart" || op == "close") {
    for (k in count) if (index(k, n SUBSEP) == 1) delete count[k]
    answer("{\"id\":" id "}")
  } else if (op == "decide") {
    # As a string by %.0f: awk would write a window number past 2^31 with CONVFMT ("%.6g"),
    # and neighbouring windows would share a count.
    window = sprintf("%.0f", int(field($0, "now_ms") / window_ms[n]))
    k = n SUBSEP field($0, "key") SUBSEP window
    cost = field($0, "cost") + 0
    if (count[k] + cost <= limit[n]) {
      count[k] += cost
      answer("{\"id\":" id ",\"allowed\":true,\"remaining\":" (limit[n] - count[k]) "}")
    } else {
      answer("{\"id\":" id ",\"allowed\":false,\"remaining\":" (limit[n] - count[k]) "}")
    }
  } else if (op == "bye") {
    exit 0
  }
}
