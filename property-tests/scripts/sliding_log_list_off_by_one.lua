-- FLAWED on purpose: the sliding log of sliding_log_list.lua, one entry off: it keeps limit + 1
-- timestamps and looks at the oldest of them, so it admits limit + 1 in a window.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if redis.call('LLEN', KEYS[1]) > limit then
  local oldest = tonumber(redis.call('LINDEX', KEYS[1], limit))
  if now - oldest < window then return false end
end
redis.call('LPUSH', KEYS[1], now)
redis.call('LTRIM', KEYS[1], 0, limit)
redis.call('PEXPIRE', KEYS[1], window)
return true
