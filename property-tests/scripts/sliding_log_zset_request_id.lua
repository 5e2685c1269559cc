-- A sliding log in a sorted set, in the style of the sorted-set limiters that give each request a
-- member of its own (a GUID, random bytes): the score is the time, the member the request's id.
-- It trims entries at least one window old, so its window is [now - window, now): half-open.
-- Reply: allowed, remaining.
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local used = redis.call('ZCARD', key)
if used >= limit then
  return {0, 0}
end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return {1, limit - used - 1}
