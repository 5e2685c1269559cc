-- FAILS on purpose: a counter kept in a cjson-encoded string whose first write stores a bare
-- number; once the window has one hit, decoding gives a number, and indexing it errs. The
-- error must be reported as a failure, never as "nothing found".
local raw = redis.call('GET', KEYS[1])
if not raw then
  redis.call('SET', KEYS[1], cjson.encode(1), 'PX', ARGV[1])
  return {1, 1}
end
local state = cjson.decode(raw)
state.hits = state.hits + 1
redis.call('SET', KEYS[1], cjson.encode(state), 'KEEPTTL')
return {state.hits <= tonumber(ARGV[2]) and 1 or 0, state.hits}
