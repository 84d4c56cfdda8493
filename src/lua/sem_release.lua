-- sem_release: give back a holder's permits, or withdraw a waiting ticket; wake who now fits.
-- KEYS as sem_take (holders, permits, queue, alive, wants, counter, meta, who, history), and
-- KEYS[10] the watchers zset (lib/sem.lua).
-- ARGV[1] token, ARGV[2] wake-list key prefix, ARGV[3] ticket heartbeat ms, ARGV[4] events the
-- history keeps (0: none recorded), ARGV[5] who calls, ARGV[6] how the hold ends ('',
-- 'withdraw': a waiter that gives up, recorded as `busy` when it held nothing, 'lost' or
-- 'timeout': a `run` form, recorded first), ARGV[7] a `run` form's exit code (''), ARGV[8] ms
-- its take waited ('')
-- returns 1 released | 2 released, and a queued waiter that now fits was woken | 0 the token
-- held nothing (a queued ticket is withdrawn all the same)
-- @lib clock
-- @lib history
-- @lib sem
local holders, permits, queue, alive, wants, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[7]
local token, wake_prefix, heartbeat = ARGV[1], ARGV[2], tonumber(ARGV[3])
local cap, who, how, exit_code, waited = tonumber(ARGV[4] or '0'), ARGV[5], ARGV[6] or '', ARGV[7], ARGV[8]
check_types({'zset', 'hash', 'zset', 'zset', 'hash', 'string', 'hash', 'hash', 'stream'}, 'semaphore')
local now = server_ms()
if how == 'lost' or how == 'timeout' then
  history_add(KEYS[9], cap, how, who, 'token', token, 'exit_code', exit_code)
end

-- An expired lease is not ours to give back any more: it is reclaimed (and recorded as
-- expired), not released.
sem_drop_expired(now, cap)
local released = 0
if redis.call('ZSCORE', holders, token) then
  released = 1
  local holder_who, at = string.match(redis.call('HGET', KEYS[8], token) or '', '^(.*)\31(%d+)$')
  at = tonumber(at)
  history_add(KEYS[9], cap, 'released', holder_who, 'token', token, 'permits',
              redis.call('HGET', permits, token), 'held_ms', at and now - at, 'exit_code', exit_code,
              'waited_ms', waited)
  redis.call('ZREM', holders, token)
  redis.call('HDEL', permits, token)
  redis.call('HDEL', KEYS[8], token)
elseif how == 'withdraw' then
  history_add(KEYS[9], cap, 'busy', who, 'token', token, 'waited_ms', waited)
end
redis.call('ZREM', queue, token)
redis.call('ZREM', alive, token)
redis.call('HDEL', wants, token)
redis.call('DEL', wake_prefix .. token)
local limit = tonumber(redis.call('HGET', meta, 'limit') or '0')
local room = limit
for _, v in ipairs(redis.call('HVALS', permits)) do room = room - tonumber(v) end
local woken = sem_wake_admissible(room, wake_prefix, heartbeat)
sem_wake_watchers(limit - room, now)
if released == 1 and woken then return 2 end
return released
