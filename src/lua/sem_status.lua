-- @no-writes
-- sem_status: the live holders with their permits and remaining lease, and the queue length.
-- KEYS as sem_take (holders, permits, queue, alive, wants, counter, meta).
-- returns {limit, in_use, waiting, token1, permits1, ttl_ms1, who1, acquired_at1, held_ms1, token2, ...}
-- (who '' and the times -1 for a holder an older rcoord admitted)
-- @lib clock
-- @lib holder
local holders, permits, queue, alive, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[7]
check_types({'zset', 'hash', 'zset', 'zset', 'hash', 'string', 'hash', 'hash', 'stream'}, 'semaphore')
local now = server_ms()
local out = {tonumber(redis.call('HGET', meta, 'limit') or '0'), 0, 0}
local used = 0
local live = redis.call('ZRANGEBYSCORE', holders, '(' .. now, '+inf', 'WITHSCORES')
for i = 1, #live, 2 do
  local k = tonumber(redis.call('HGET', permits, live[i]) or '1')
  used = used + k
  table.insert(out, live[i])
  table.insert(out, k)
  table.insert(out, tonumber(live[i + 1]) - now)
  push_holder(out, KEYS[8], live[i], now)
end
out[2] = used
out[3] = redis.call('ZCOUNT', alive, '(' .. now, '+inf')
return out
