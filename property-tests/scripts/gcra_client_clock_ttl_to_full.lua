-- GCRA on the client's clock, in the style of the libraries that send their own now: the
-- theoretical arrival time (TAT) in milliseconds, kept with a TTL of exactly the time until the
-- bucket is full again (new TAT - now) and no more. A request held in transit longer than the
-- bucket's tolerance can reach the store after the key expired, and is admitted on a full bucket.
-- KEYS[1]: the key. ARGV: the burst, the interval in ms, the client's now in ms. Reply: allowed,
-- remaining.
local key = KEYS[1]
local burst = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', key) or now)
if tat < now then tat = now end
local new_tat = tat + interval
if new_tat - now > burst * interval then
  return {0, 0}
end
redis.call('SET', key, new_tat, 'PX', new_tat - now)
return {1, math.floor((burst * interval - (new_tat - now)) / interval)}
