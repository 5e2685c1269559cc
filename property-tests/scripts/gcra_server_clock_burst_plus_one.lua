-- FLAWED on purpose: a GCRA on the server's clock (TIME) that lets the theoretical arrival time
-- run a whole burst ahead of now rather than burst - 1 intervals: one request more than the
-- burst gets through at once.
local key = KEYS[1]
local burst = tonumber(ARGV[1])
local interval = 1 / tonumber(ARGV[2])

local t = redis.call('TIME')
local now = (tonumber(t[1]) - 1577836800) + tonumber(t[2]) / 1000000

local tat = math.max(tonumber(redis.call('GET', key)) or now, now)
if tat - now > burst * interval then
  return {0}
end
redis.call('SET', key, tat + interval, 'PX', math.ceil((burst + 1) * interval * 1000) + 1000)
return {1}
