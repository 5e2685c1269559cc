-- A sliding log whose limit and window live in a configuration hash that the library writes once,
-- when the application makes its limiter object ("set rate"), in the style of the limiter
-- objects of Java and Go clients: the script reads them and refuses to run without them.
-- KEYS[1]: the configuration hash, KEYS[2]: the log. ARGV: now (ms), the request's member.
-- Reply: allowed, remaining.
local config = redis.call('HMGET', KEYS[1], 'limit', 'window')
local limit, window = tonumber(config[1]), tonumber(config[2])
if not limit or not window then
  return redis.error_reply('RateLimiter is not initialized')
end
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
local used = redis.call('ZCARD', KEYS[2])
if used >= limit then
  return {0, 0}
end
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('PEXPIRE', KEYS[2], window)
return {1, limit - used - 1}
