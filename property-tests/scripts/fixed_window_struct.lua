-- A fixed window whose count is a binary record packed with `struct`: one key per aligned
-- window, holding the count and the window's start second as two big-endian 32-bit integers.
-- Count reply; the library decides `count <= limit`.
local limit = tonumber(ARGV[1])
local start_s = tonumber(ARGV[2])
local window_ms = tonumber(ARGV[3])
local record = redis.call('GET', KEYS[1])
local count = 0
if record then
  count = struct.unpack('>I4', record)
end
if count >= limit then
  return limit + 1
end
count = count + 1
redis.call('SET', KEYS[1], struct.pack('>I4I4', count, start_s), 'PX', window_ms)
return count
