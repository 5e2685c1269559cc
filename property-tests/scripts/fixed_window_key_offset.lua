-- A fixed window whose edges are spread over the window, key by key, so that every key's
-- window does not reset at the same instant: the client sends the key's CRC-32, and the key's
-- windows start at that modulo the window. One counter per window, INCR then PEXPIRE on its
-- first hit; denied requests are counted too (harmless: the window is full). Reply
-- {allowed, remaining}.
local limit = tonumber(ARGV[1])
local window_ms = tonumber(ARGV[2])
local now_ms = tonumber(ARGV[3])
local offset = tonumber(ARGV[4]) % window_ms
local index = math.floor((now_ms - offset) / window_ms)
local key = KEYS[1] .. ':' .. index
local count = redis.call('INCR', key)
if count == 1 then
  redis.call('PEXPIRE', key, window_ms * 2)
end
if count > limit then
  return {0, 0}
end
return {1, limit - count}
