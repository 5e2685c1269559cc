-- A token bucket whose decision is inverted: it computes its tokens as a hash bucket does, then
-- answers "denied" whenever they suffice (a comparison written the wrong way round). It never
-- admits, so it never breaks the bucket's promise: only the false-denials check finds it.
-- KEYS[1]: the key. ARGV: the burst, tokens per second, the client's now in ms. Reply: allowed,
-- remaining.
local key = KEYS[1]
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2]) / 1000
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', key, 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
redis.call('HSET', key, 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', key, math.ceil(burst / rate) + 1000)
if tokens < 1 then
  return {1, math.floor(tokens)}
end
return {0, 0}
