-- A token bucket that adds whole tokens, one per full interval since its last refill, and
-- restarts the interval at the request that refilled (the part of an interval left over is
-- dropped), as many hand-written buckets do. State in a hash; reply: allowed, tokens left.
local key = KEYS[1]
local capacity = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', key, 'tokens', 'last_refill')
local tokens = tonumber(state[1])
local last_refill = tonumber(state[2])
if tokens == nil then
  tokens = capacity
  last_refill = now
end
local intervals = math.floor((now - last_refill) / interval)
if intervals > 0 then
  tokens = math.min(capacity, tokens + intervals)
  last_refill = now
end
if tokens < 1 then
  return {0, tokens}
end
tokens = tokens - 1
redis.call('HSET', key, 'tokens', tokens, 'last_refill', last_refill)
redis.call('PEXPIRE', key, capacity * interval * 2)
return {1, tokens}
