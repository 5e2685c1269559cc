-- A sliding window counter whose windows start at the key's first request rather than at
-- multiples of the window since the epoch: the hash keeps where the current window started, its
-- count and the previous window's; the hash lives two windows, so after a whole empty window the
-- next request starts afresh. Reply: the weighted count this request brings it to, and the
-- library decides `count <= limit`.
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', key, 'start', 'current', 'previous')
local start = tonumber(state[1])
local current = tonumber(state[2]) or 0
local previous = tonumber(state[3]) or 0
if start == nil then
  start = now
elseif now - start >= 2 * window then
  start, current, previous = now, 0, 0
elseif now - start >= window then
  start, previous, current = start + window, current, 0
end
local weighted = previous * (window - (now - start)) / window + current + 1
if weighted > limit then
  return {limit + 1}
end
redis.call('HSET', key, 'start', start, 'current', current + 1, 'previous', previous)
redis.call('PEXPIRE', key, 2 * window)
return {math.ceil(weighted)}
