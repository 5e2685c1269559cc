-- A leaky bucket (a meter: its level drains at the rate, a request adds its cost, admitted while
-- the level stays within the burst) in a hash, in the style of the scripts that create the key on
-- a first request and refresh its TTL on the ones after: the first write sets no TTL, so a key
-- that sees one request is never freed.
-- KEYS[1]: the key. ARGV: the burst, tokens per second, the client's now in ms. Reply: allowed,
-- remaining.
local key = KEYS[1]
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2]) / 1000
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', key, 'level', 'at')
if not state[1] then
  redis.call('HSET', key, 'level', 1, 'at', now)
  return {1, burst - 1}
end
local at = tonumber(state[2])
local level = math.max(0, tonumber(state[1]) - math.max(0, now - at) * rate)
local allowed = level + 1 <= burst
if allowed then level = level + 1 end
redis.call('HSET', key, 'level', level, 'at', math.max(at, now))
redis.call('PEXPIRE', key, math.ceil(burst / rate) + 1000)
if allowed then
  return {1, math.floor(burst - level)}
end
return {0, 0}
