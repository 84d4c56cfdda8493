-- lock_release: give the lock back if ARGV[1] holds it (as the writer or as a reader), and
-- wake who may take it next; a waiter that gives up leaves the waiting sets here too.
-- KEYS as lock_acquire (lock hash, fence counter, writers' wake list, readers zset, waiting
-- writers zset, waiting readers zset, readers' fences hash, readers' identities hash, history
-- stream, the writer's open take, the watchers zset).
-- ARGV[1] token, ARGV[2] prefix of the readers' wake lists (same {hash tag}), ARGV[3] heartbeat
-- ms, ARGV[4] events the history keeps (0: none recorded), ARGV[5] who calls, ARGV[6] how the
-- hold ends: '' given back, 'withdraw' (a waiter that gives up: recorded as `busy` when it did
-- not hold it), 'lost' or 'timeout' (a `run` form: recorded first, then the give-back),
-- ARGV[7] the exit code of a `run` form ('' for none), ARGV[8] ms it waited for the take (''),
-- ARGV[9] a channel to announce a writer's give-back on ('' or absent: none): 'released', then
-- a space and the waiting writer to go first (the one whose heartbeat is oldest), if any. A
-- Redlock's waiters listen there on every node; the one named tries at once, the others wait
-- for it (the same one is named on every node when their waiting sets agree). ARGV[10] ms
-- to keep it instead (`lock run --min-hold`): the hold ends now for the history, recorded as
-- ARGV[6] says, and the lock (or the reader's share) that many ms from now, by its TTL or
-- deadline (see below).
-- returns 1 released (or kept) | 2 released, and someone was woken to take it next (a waiting
-- writer, or the waiting readers) | 0 not held by the token
-- Whenever the lock is free afterwards, waiters are woken even if nothing was released: a
-- caller that gives up waiting may have taken the last wake-up, and passing it on costs one
-- spurious retry at most.
-- @lib clock
-- @lib history
-- @lib lock
local token, rwake, heartbeat = ARGV[1], ARGV[2], tonumber(ARGV[3])
local cap, who, how, exit_code, waited = tonumber(ARGV[4] or '0'), ARGV[5], ARGV[6] or '', ARGV[7], ARGV[8]
local announce, kept = ARGV[9] or '', tonumber(ARGV[10] or '')
local holder, present, held = lock_holder()
local now = server_ms()
local readers = lock_drop_expired(holder, now, cap, present)
if how == 'lost' or how == 'timeout' then
  history_add(KEYS[9], cap, how, who, 'token', token, 'exit_code', exit_code)
end
-- Kept, a reader: its share is lengthened and its `released` recorded now, as a writer's
-- below; the mark beside its identity (when the command ended, its code) tells lock_status
-- that the share is only kept, and lock_drop_expired that its lapse is no `expired`.
if kept and holder ~= token then
  local fence = lock_extend_reader(token, kept, now)
  if not fence then return 0 end
  local reader_who, at = string.match(redis.call('HGET', KEYS[8], token) or '', '^(.*)\31(%d+)$')
  at = tonumber(at)
  history_add(KEYS[9], cap, 'released', reader_who, 'token', token, 'mode', 'shared', 'fence', fence,
              'held_ms', at and now - at, 'exit_code', exit_code, 'waited_ms', waited, 'kept_ms', kept)
  redis.call('HSET', KEYS[8], lock_kept_mark(token), now .. '\31' .. (exit_code or ''))
  redis.call('PEXPIRE', KEYS[8], redis.call('PTTL', KEYS[4]))
  return 1
end
-- Kept: the writer's `released` is recorded now, with the exit code and how much longer the
-- lock stays (kept_ms), and its take is closed, so that its lapse records no `expired`;
-- nobody is woken, the lock is still taken (its hash says since when it is only kept).
if kept then
  -- lock_status shows that the lock is only kept now: when the command ended, and its code.
  redis.call('HSET', KEYS[1], 'ended_at', now, 'exit_code', exit_code or '')
  redis.call('PEXPIRE', KEYS[1], kept)
  local at = tonumber(held[3] or '')
  history_add(KEYS[9], cap, 'released', held[2], 'token', token, 'fence', held[4],
              'held_ms', at and now - at, 'exit_code', exit_code, 'waited_ms', waited,
              'kept_ms', kept)
  history_close(KEYS[10])
  return 1
end
-- Calls on a key that does not exist are left out (they would find it empty); nothing here
-- makes the waiting sets, the readers' set or the wake list before the last use of `present`.
if present[5] then redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now) end
if present[6] then redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now) end
if holder ~= token then
  -- A waiter that gives up leaves the waiting sets. The writer that holds the lock is in
  -- none: its take took it out of them.
  if present[5] then redis.call('ZREM', KEYS[5], token) end
  if present[6] then redis.call('ZREM', KEYS[6], token) end
  redis.call('DEL', rwake .. token)
end

local released = 0
if holder == token then
  redis.call('DEL', KEYS[1])
  holder = false
  released = 1
  local at = tonumber(held[3] or '')
  history_add(KEYS[9], cap, 'released', held[2], 'token', token, 'fence', held[4],
              'held_ms', at and now - at, 'exit_code', exit_code, 'waited_ms', waited)
  history_close(KEYS[10])
  if announce ~= '' and readers == 0 then
    -- pcall: a user whose ACL refuses the channel still gets the lock released; its
    -- waiters then wake by their own timers.
    local first = present[5] and redis.call('ZRANGE', KEYS[5], 0, 0)[1]
    redis.pcall('PUBLISH', announce, first and ('released ' .. first) or 'released')
  end
elseif present[4] and redis.call('ZREM', KEYS[4], token) == 1 then
  readers = readers - 1
  local reader_who, at = string.match(redis.call('HGET', KEYS[8], token) or '', '^(.*)\31(%d+)$')
  at = tonumber(at)
  history_add(KEYS[9], cap, 'released', reader_who, 'token', token, 'mode', 'shared', 'fence',
              redis.call('HGET', KEYS[7], token), 'held_ms', at and now - at, 'exit_code', exit_code,
              'waited_ms', waited)
  redis.call('HDEL', KEYS[7], token)
  redis.call('HDEL', KEYS[8], token, lock_kept_mark(token))
  released = 1
elseif how == 'withdraw' then
  lock_record_busy(cap, who, token, waited)
end

local woken = false
if not holder then
  local writers = present[5] and redis.call('ZCARD', KEYS[5]) or 0
  if readers == 0 then  -- free: one writer may go, and every watcher learns it
    lock_wake_watchers(now)
    if present[3] then redis.call('DEL', KEYS[3]) end
    redis.call('RPUSH', KEYS[3], '1')
    redis.call('PEXPIRE', KEYS[3], 60000)
    woken = writers > 0
  end
  -- No writer waits: every reader may go.
  if present[6] and writers == 0 then
    for _, r in ipairs(redis.call('ZRANGE', KEYS[6], 0, -1)) do
      redis.call('DEL', rwake .. r)
      redis.call('RPUSH', rwake .. r, '1')
      redis.call('PEXPIRE', rwake .. r, heartbeat * 2)
      woken = true
    end
  end
end
if released == 1 and woken then return 2 end
return released
