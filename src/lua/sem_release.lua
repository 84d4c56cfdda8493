-- sem_release: give back a holder's permits, or withdraw a waiting ticket; wake who now fits.
-- KEYS as sem_take (holders, permits, queue, alive, wants, counter, meta).
-- ARGV[1] token, ARGV[2] wake-list key prefix, ARGV[3] ticket heartbeat ms
-- returns 1 released | 0 the token held nothing (a queued ticket is withdrawn all the same)
-- @lib clock
local holders, permits, queue, alive, wants, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[7]
local token, wake_prefix, heartbeat = ARGV[1], ARGV[2], tonumber(ARGV[3])
check_types({'zset', 'hash', 'zset', 'zset', 'hash', 'string', 'hash', 'hash'}, 'semaphore')
local now = server_ms()

local released = 0
local deadline = redis.call('ZSCORE', holders, token)
if deadline then
  -- An expired lease is not ours to give back any more: it is reclaimed, not released.
  if tonumber(deadline) > now then released = 1 end
  redis.call('ZREM', holders, token)
  redis.call('HDEL', permits, token)
  redis.call('HDEL', KEYS[8], token)
end
redis.call('ZREM', queue, token)
redis.call('ZREM', alive, token)
redis.call('HDEL', wants, token)
redis.call('DEL', wake_prefix .. token)

for _, h in ipairs(redis.call('ZRANGEBYSCORE', holders, '-inf', now)) do
  redis.call('HDEL', permits, h)
  redis.call('HDEL', KEYS[8], h)
  redis.call('ZREM', holders, h)
end
for _, w in ipairs(redis.call('ZRANGEBYSCORE', alive, '-inf', now)) do
  redis.call('ZREM', queue, w)
  redis.call('HDEL', wants, w)
  redis.call('ZREM', alive, w)
end
local limit = tonumber(redis.call('HGET', meta, 'limit') or '0')
local room = limit
for _, v in ipairs(redis.call('HVALS', permits)) do room = room - tonumber(v) end
for _, t in ipairs(redis.call('ZRANGE', queue, 0, -1)) do
  room = room - tonumber(redis.call('HGET', wants, t) or '1')
  if room < 0 then break end
  local wake = wake_prefix .. t
  redis.call('DEL', wake)
  redis.call('RPUSH', wake, '1')
  redis.call('PEXPIRE', wake, heartbeat * 2)
end
return released
