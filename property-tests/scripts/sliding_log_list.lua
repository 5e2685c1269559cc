-- A sliding log kept in a list, newest first, in the style of the gateway plugins: LTRIM keeps
-- the last `limit` timestamps; a request is admitted when the oldest of them has left the
-- window. Boolean reply: true admitted, false (nil to the client) denied.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if redis.call('LLEN', KEYS[1]) >= limit then
  local oldest = tonumber(redis.call('LINDEX', KEYS[1], limit - 1))
  if now - oldest < window then return false end
end
redis.call('LPUSH', KEYS[1], now)
redis.call('LTRIM', KEYS[1], 0, limit - 1)
redis.call('PEXPIRE', KEYS[1], window)
return true
