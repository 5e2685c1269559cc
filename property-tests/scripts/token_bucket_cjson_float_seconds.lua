-- FLAWED, as many are: a token bucket whose state is one cjson-encoded string, in the style of
-- the Python and Ruby libraries that pass time.time(): the client sends now in fractional
-- seconds; the reply is {allowed, tokens left}. cjson writes numbers with 14 significant digits,
-- so a 2026 instant in seconds keeps only a tenth of a millisecond: the refill is computed from
-- a `last` rounded, and a bucket refills early (token_bucket_cjson.lua keeps milliseconds).
local key = KEYS[1]
local rate = tonumber(ARGV[1])      -- tokens per second
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])       -- seconds, with a fraction
local cost = tonumber(ARGV[4])

local state = redis.call('GET', key)
local tokens, last = capacity, now
if state then
  local s = cjson.decode(state)
  tokens, last = s.tokens, s.last
end
tokens = math.min(capacity, tokens + math.max(0, now - last) * rate)

local allowed = 0
if tokens >= cost - 1e-9 then
  tokens = tokens - cost
  allowed = 1
end
redis.call('SET', key, cjson.encode({tokens = tokens, last = math.max(now, last)}),
           'PX', math.ceil(capacity / rate * 1000) + 1000)
return {allowed, math.floor(tokens)}
