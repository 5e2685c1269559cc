-- A token bucket kept in two string keys, its level and the time of the last refill, read
-- together with MGET and written with MSET (then a TTL each), in the style of the two-key
-- buckets of web-framework limiters. The level counts in token-milliseconds (a token is one
-- interval's worth), so every number is whole. ARGV: burst, interval (ms), now (ms), TTL (ms).
-- Reply: allowed, remaining.
local burst = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('MGET', KEYS[1], KEYS[2])
local level = tonumber(state[1]) or burst * interval
local last = tonumber(state[2]) or now
level = math.min(burst * interval, level + math.max(0, now - last))
local allowed = 0
if level >= interval then
  level = level - interval
  allowed = 1
end
redis.call('MSET', KEYS[1], level, KEYS[2], math.max(now, last))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return {allowed, math.floor(level / interval)}
