-- A fixed window anchored at the first hit by the key's TTL, in the style of the Express and
-- Koa middleware stores: INCR, and on the first hit PEXPIRE the window; the reply is the count
-- and the window's time to live, and the middleware denies when the count passes the limit.
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
local ttl = redis.call('PTTL', KEYS[1])
return {hits, ttl}
