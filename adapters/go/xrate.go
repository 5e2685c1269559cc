// ratelab's adapter (docs/exec-protocol.md) for golang.org/x/time/rate, one Limiter per key, on
// ratelab's virtual clock:
//
//	ratelab check --exec adapters/go/xrate --model token-bucket
//
// rate.Limiter takes the time as an argument (AllowN(t, n)), so the adapter passes the instant
// ratelab sends and nothing else changes. A Limiter is a token bucket: NewLimiter(r, b) holds b
// tokens and adds r a second (fractions kept, as a float64); a new one is full at its first
// use. For --model token-bucket with burst B and one token every T: NewLimiter(1/T, B).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"golang.org/x/time/rate"
)

type policy struct {
	Algorithm  string `json:"algorithm"`
	Burst      int    `json:"burst"`
	IntervalNs int64  `json:"interval_ns"`
}

type message struct {
	ID      int64   `json:"id"`
	Op      string  `json:"op"`
	Limiter int64   `json:"limiter"`
	Policy  *policy `json:"policy"`
	Key     string  `json:"key"`
	Cost    int     `json:"cost"`
	NowNs   int64   `json:"now_ns"`
}

// The version of Debian's golang-golang-x-time-dev it was built against (set by ./xrate).
var version = "(version unknown)"

// One limiter ratelab opened: its policy, and a rate.Limiter per key.
type limiter struct {
	policy policy
	byKey  map[string]*rate.Limiter
}

func (l *limiter) decide(key string, cost int, now time.Time) bool {
	lim := l.byKey[key]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(time.Duration(l.policy.IntervalNs)), l.policy.Burst)
		l.byKey[key] = lim
	}
	return lim.AllowN(now, cost)
}

func answer(m message, limiters map[int64]*limiter) (map[string]any, bool) {
	a := map[string]any{"id": m.ID}
	switch m.Op {
	case "hello":
		a["version"] = 1
		a["name"] = "golang.org/x/time/rate " + version
		a["supports"] = []string{}
		a["resolution_ns"] = 1
	case "open":
		if m.Policy == nil || m.Policy.Algorithm != "token-bucket" {
			a["error"] = "rate.Limiter is a token bucket (--model token-bucket)"
			break
		}
		limiters[m.Limiter] = &limiter{*m.Policy, map[string]*rate.Limiter{}}
	case "restart":
		if l := limiters[m.Limiter]; l != nil {
			l.byKey = map[string]*rate.Limiter{}
		}
	case "close":
		delete(limiters, m.Limiter)
	case "decide":
		l := limiters[m.Limiter]
		if l == nil {
			a["error"] = fmt.Sprintf("no limiter %d is open", m.Limiter)
			break
		}
		a["allowed"] = l.decide(m.Key, m.Cost, time.Unix(0, m.NowNs))
	case "bye":
		return nil, false
	default:
		a["error"] = "no op " + m.Op
	}
	return a, true
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<16)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	limiters := map[int64]*limiter{}
	for {
		text, err := in.ReadBytes('\n')
		if len(text) > 0 {
			var m message
			if err := json.Unmarshal(text, &m); err != nil {
				fmt.Fprintln(os.Stderr, "xrate: not a message:", err)
				os.Exit(2)
			}
			a, more := answer(m, limiters)
			if !more {
				return
			}
			line, _ := json.Marshal(a)
			out.Write(append(line, '\n'))
			// Answers go out together once the messages sent together are read: ratelab
			// waits for one only after it has written them all.
			if in.Buffered() == 0 {
				out.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
