-- A token bucket whose state is one cjson-encoded string {tokens, last}, with the client's clock
-- in whole milliseconds (13 digits, which cjson's 14 significant digits keep); the reply is
-- {allowed, tokens left}.
local key = KEYS[1]
local per_ms = tonumber(ARGV[1]) / 1000  -- tokens per millisecond
local capacity = tonumber(ARGV[2])
local now = tonumber(ARGV[3])            -- unix milliseconds
local cost = tonumber(ARGV[4])

local state = redis.call('GET', key)
local tokens, last = capacity, now
if state then
  local s = cjson.decode(state)
  tokens, last = s.tokens, s.last
end
tokens = math.min(capacity, tokens + math.max(0, now - last) * per_ms)

local allowed = 0
if tokens >= cost - 1e-9 then
  tokens = tokens - cost
  allowed = 1
end
redis.call('SET', key, cjson.encode({tokens = tokens, last = math.max(now, last)}),
           'PX', math.ceil(capacity / per_ms) + 1000)
return {allowed, math.floor(tokens)}
