-- lock_break: operator override; delete the lock whoever holds it (writer and readers), and
-- wake the waiters.
-- KEYS as lock_acquire (lock hash, fence counter, writers' wake list, readers zset, waiting
-- writers zset, waiting readers zset, readers' fences hash, readers' identities hash, history
-- stream, the writer's open take, the watchers zset).
-- ARGV[1] prefix of the readers' wake lists, ARGV[2] heartbeat ms, ARGV[3] events the history
-- keeps (0: none recorded), ARGV[4] who breaks it
-- returns the token of the writer that held it | 'readers:N' | '' when it was free
-- @lib clock
-- @lib history
-- @lib lock
local rwake, heartbeat = ARGV[1], tonumber(ARGV[2])
local cap, who = tonumber(ARGV[3] or '0'), ARGV[4]
local holder, present, held = lock_holder()
local now = server_ms()
local readers = lock_drop_expired(holder, now, cap, present)
local was = ''
if holder then was = holder elseif readers > 0 then was = 'readers:' .. readers end
if was == '' then return '' end
if holder then
  local at = tonumber(held[3] or '')
  history_add(KEYS[9], cap, 'broken', who, 'token', holder, 'fence', held[4], 'held_by', held[2],
              'held_ms', at and now - at)
else
  history_add(KEYS[9], cap, 'broken', who, 'mode', 'shared', 'readers', readers)
end
history_close(KEYS[10])
redis.call('DEL', KEYS[1], KEYS[4], KEYS[7], KEYS[8])
lock_wake_watchers(now)
redis.call('DEL', KEYS[3])
redis.call('RPUSH', KEYS[3], '1')
redis.call('PEXPIRE', KEYS[3], 60000)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
if redis.call('ZCARD', KEYS[5]) == 0 then
  for _, r in ipairs(redis.call('ZRANGE', KEYS[6], 0, -1)) do
    redis.call('DEL', rwake .. r)
    redis.call('RPUSH', rwake .. r, '1')
    redis.call('PEXPIRE', rwake .. r, heartbeat * 2)
  end
end
return was
