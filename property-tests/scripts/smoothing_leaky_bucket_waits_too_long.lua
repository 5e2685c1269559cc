-- The smoothing leaky bucket of smoothing_leaky_bucket.lua, but its client is told to wait one
-- interval more than the schedule it keeps: every admission goes later than it needs to (a
-- blocking limiter that sleeps too long), which no cap or conformance sees. A flaw: a wait longer
-- than the model's is a denial for that long. KEYS[1]: when the next request may go (ms).
-- ARGV: interval (ms), the longest wait (ms), now (ms). Reply: allowed, wait (ms), retry after (ms).
local interval = tonumber(ARGV[1])
local max_wait = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local next_free = tonumber(redis.call('GET', KEYS[1])) or now
local at = math.max(now, next_free)
local wait = at - now
if wait > max_wait then
  return {0, 0, wait - max_wait}
end
redis.call('SET', KEYS[1], at + interval, 'PX', at + interval - now + 1000)
return {1, wait + interval, 0}
