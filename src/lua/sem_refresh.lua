-- sem_refresh: extend a holder's lease if it is still live.
-- KEYS as sem_take (holders, permits, queue, alive, wants, counter, meta, ..., KEYS[11] the take
-- counters, where a lease found gone counts as `lost`).
-- ARGV[1] token, ARGV[2] ttl_ms
-- returns 1 refreshed | 0 not a live holder (never held, released, expired or removed)
-- @lib clock
-- @lib contention
check_types({'zset', 'hash', 'zset', 'zset', 'hash', 'string', 'hash', 'hash', 'stream', 'zset', 'hash'},
            'semaphore')
local now = server_ms()
local deadline = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not deadline or tonumber(deadline) <= now then
  contention_add(KEYS[11], 'lost', 1)
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
-- Every key lives until a minute after the last lease ends, as sem_take keeps them.
local keep = tonumber(ARGV[2]) + 60000
for i = 1, 8 do
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl ~= -2 and ttl < keep then redis.call('PEXPIRE', KEYS[i], keep) end
end
return 1
