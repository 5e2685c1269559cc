-- A token bucket on the server's clock in whole seconds, in the style of the gateway filters
-- that read `redis.call('TIME')[1]`: tokens and the last refresh in two keys that expire after
-- twice the fill time. Reply: allowed, tokens left.
local tokens_key = KEYS[1]
local timestamp_key = KEYS[2]
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local now = tonumber(redis.call('TIME')[1])
local ttl = math.floor(capacity / rate * 2)
local last_tokens = tonumber(redis.call('GET', tokens_key)) or capacity
local last_refreshed = tonumber(redis.call('GET', timestamp_key)) or 0
local delta = math.max(0, now - last_refreshed)
local filled = math.min(capacity, last_tokens + delta * rate)
local allowed = filled >= 1
local new_tokens = filled
if allowed then
  new_tokens = filled - 1
end
redis.call('SETEX', tokens_key, ttl, new_tokens)
redis.call('SETEX', timestamp_key, ttl, now)
if allowed then
  return {1, new_tokens}
end
return {0, new_tokens}
