-- sem_watch: `sem wait`'s look at the semaphore. Enough permits free: say so, and leave the
-- watchers. Too few: the caller stays among the watchers (KEYS[10]) until its heartbeat
-- deadline, so that the give-back that frees enough wakes it (lib/sem.lua,
-- sem_wake_watchers); it takes nothing, queues for nothing and delays no taker.
-- KEYS as sem_take (holders, permits, queue, alive, wants, counter, meta, who, history), then
-- KEYS[10] the watchers zset; the watcher's wake list is KEYS[10] .. ':' .. ARGV[1].
-- ARGV[1] the watcher, `<most in use>:<token>` (most in use: the limit it waits with, less
-- the permits it waits for), ARGV[2] ms it stays among the watchers without looking again
-- (0: it stops waiting and leaves; a wake-up that reached it first still counts), ARGV[3]
-- events the history keeps (0: none recorded; leases found run out are `expired`)
-- returns {1, in_use, holders} enough free (or freed since the last look)
--       | {0, in_use, holders}
-- @lib clock
-- @lib history
-- @lib sem
local watcher, life, cap = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3] or '0')
local most = tonumber(string.match(watcher, '^(%d+):'))
check_types({'zset', 'hash', 'zset', 'zset', 'hash', 'string', 'hash', 'hash', 'stream', 'zset'},
            'semaphore')
local now = server_ms()
sem_drop_expired(now, cap)
local used = 0
for _, v in ipairs(redis.call('HVALS', KEYS[2])) do used = used + tonumber(v) end
local holders = redis.call('ZCARD', KEYS[1])
local wake = KEYS[10] .. ':' .. watcher
if redis.call('LPOP', wake) or used <= most then
  redis.call('ZREM', KEYS[10], watcher)
  return {1, used, holders}
end
if life <= 0 then
  redis.call('ZREM', KEYS[10], watcher)
else
  redis.call('ZREMRANGEBYSCORE', KEYS[10], '-inf', now)
  redis.call('ZADD', KEYS[10], now + life, watcher)
  redis.call('PEXPIRE', KEYS[10], life)
end
return {0, used, holders}
