-- A fixed window in one Lua script, as many services write it: the window's key from the
-- client's clock, INCR, an expiry on the first hit, and a reply of {allowed, remaining}.
-- KEYS[1]: the window's key. ARGV: the limit, the window in ms, the client's now in ms.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local key = KEYS[1] .. ':' .. math.floor(tonumber(ARGV[3]) / window)
local count = tonumber(redis.call('GET', key) or '0')
if count >= limit then
  return {0, 0}
end
redis.call('INCR', key)
redis.call('PEXPIRE', key, 2 * window)
return {1, limit - count - 1}
