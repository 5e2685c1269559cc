-- A fixed window anchored at the first hit by the key's TTL, in the style of the token stores
-- that read the TTL first: a key whose PTTL is 0 (its expiry is this very millisecond; Redis
-- keeps it until the millisecond has passed) is taken as expired, and a new window starts. The
-- window is [open, open + W) to the millisecond, where the store's own is [open, open + W]: a
-- request in the expiry's millisecond, with the window full, is admitted into a window the store
-- still keeps. A flaw (fixed_window_ttl.lua reads the count instead).
-- Reply: allowed, remaining.
local limit = tonumber(ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then
  redis.call('SET', KEYS[1], 1, 'PX', ARGV[1])
  return {1, limit - 1}
end
local hits = redis.call('INCR', KEYS[1])
if hits > limit then
  return {0, 0}
end
return {1, limit - hits}
