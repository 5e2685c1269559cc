-- GCRA on the server's clock, in the style of the Go and Node libraries that read TIME:
-- the theoretical arrival time (TAT) kept as a float of seconds since a recent epoch, the reply
-- {allowed count, remaining, retry_after seconds, reset_after seconds} with the times as strings.
redis.replicate_commands()

local key = KEYS[1]
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local period = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])

local emission_interval = period / rate
local increment = emission_interval * cost
local burst_offset = emission_interval * burst

-- Seconds since 2020-01-01, so that microseconds survive Lua's 14-digit number formatting.
local epoch = 1577836800
local t = redis.call('TIME')
local now = (tonumber(t[1]) - epoch) + tonumber(t[2]) / 1000000

local tat = tonumber(redis.call('GET', key))
if not tat then tat = now end
tat = math.max(tat, now)

local new_tat = tat + increment
local allow_at = new_tat - burst_offset
local diff = now - allow_at
local remaining = math.floor(diff / emission_interval + 1e-9)

if remaining < 0 then
  return {0, 0, tostring(-diff), tostring(tat - now)}
end

local reset_after = new_tat - now
if reset_after > 0 then
  redis.call('SET', key, new_tat, 'EX', math.ceil(reset_after))
end
return {cost, remaining, tostring(-1), tostring(reset_after)}
