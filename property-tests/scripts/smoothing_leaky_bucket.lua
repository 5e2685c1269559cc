-- A smoothing leaky bucket, in the style of the rate limiters that pace requests instead of
-- refusing bursts: each request is admitted with the wait after which it may go, one interval
-- after the last one scheduled, and denied only when that wait would pass the maximum. Its
-- client sleeps the wait, then forwards. KEYS[1]: when the next request may go (ms).
-- ARGV: interval (ms), the longest wait (ms), now (ms), and a delay its client adds to every
-- wait (ms; none when absent: smoothing_leaky_bucket_waits_too_long.yaml gives one, a flaw).
-- Reply: allowed, wait (ms), retry after (ms).
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
return {1, wait + (tonumber(ARGV[4]) or 0), 0}
