-- A token bucket whose state is one MessagePack string (cmsgpack) {tokens, last}, with the
-- client's clock in whole milliseconds; fractions of a token pack as doubles, whole counts as
-- integers. The reply is {allowed, tokens left}.
local key = KEYS[1]
local per_ms = tonumber(ARGV[1]) / 1000  -- tokens per millisecond
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])            -- unix milliseconds
local cost = tonumber(ARGV[4])

local state = redis.call('GET', key)
local tokens, last = capacity, now
if state then
  tokens, last = cmsgpack.unpack(state)
end
tokens = math.min(capacity, tokens + math.max(0, now - last) * per_ms)

local allowed = 0
if tokens >= cost - 1e-9 then
  tokens = tokens - cost
  allowed = 1
end
redis.call('SET', key, cmsgpack.pack(tokens, math.max(now, last)),
           'PX', math.ceil(capacity / per_ms) + 1000)
return {allowed, math.floor(tokens)}
