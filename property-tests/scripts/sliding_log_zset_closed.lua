-- A sliding log in a sorted set, in the style of the sorted-set limiters of web frameworks: it
-- trims with an exclusive bound, `(now - window`, so an entry exactly one window old still
-- counts. Its window is [now - window, now]: closed at both ends. Reply: allowed, remaining.
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (now - window))
local used = redis.call('ZCARD', key)
if used >= limit then
  return {0, 0}
end
-- A member unique to the request: the time and a sequence number.
redis.call('ZADD', key, now, now .. ':' .. redis.call('INCR', KEYS[2]))
redis.call('PEXPIRE', key, window + 1)
redis.call('PEXPIRE', KEYS[2], window + 1)
return {1, limit - used - 1}
