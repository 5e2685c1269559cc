#!/bin/sh
# Holds a running rate-limit service to its rules, black-box over HTTP (docs/probe.md). Start
# one first, then point this at it:
#   build/ratelab serve --listen 127.0.0.1:8080 --rules examples/rules.yaml &
#   examples/probe.sh http://127.0.0.1:8080
# It sends at most 60 requests, as 3 users, to the hit-counter API, which examples/rules.yaml
# limits to 5 a minute per user in windows aligned to the clock; exit 0 when nothing is found.
set -eu
base=${1:?usage: probe.sh http://HOST:PORT}
ratelab=${RATELAB:-build/ratelab}
exec "$ratelab" probe "$base/api/hit" --method POST \
  --header 'Content-Type: application/json' --body '{"userId": "{user}"}' \
  --model fixed-window --limit 5 --window 1m --users 3 --max-requests 60 --max-rps 100
