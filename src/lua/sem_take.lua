-- sem_take: admit a holder of K permits, fairly, or queue it.
-- KEYS[1] holders zset (token -> lease deadline, ms of server time), KEYS[2] permits hash
-- (holder token -> K), KEYS[3] queue zset (ticket token -> arrival number), KEYS[4] alive zset
-- (ticket -> heartbeat deadline), KEYS[5] wants hash (ticket -> K), KEYS[6] arrival counter,
-- KEYS[7] meta hash {limit}, KEYS[8] who hash (holder token -> who .. '\31' .. acquired_at),
-- KEYS[9] history stream, KEYS[10] the watchers of `sem wait`, KEYS[11] the take counters
-- (lib/contention.lua); all under one {hash tag}. Wake lists are <ARGV[7]><token>.
-- ARGV[1] token, ARGV[2] limit, ARGV[3] K, ARGV[4] ttl_ms, ARGV[5] 1 to queue when busy,
-- ARGV[6] ticket heartbeat ms, ARGV[7] wake-list key prefix (same {hash tag}), ARGV[8] who
-- takes it (src/identity.hpp's pack()), ARGV[9] events the history keeps (0: none recorded),
-- ARGV[10] 1 when a busy answer is the call's last (recorded as `busy`), ARGV[11] the server time
-- of the busy answer to the caller's first try (absent or empty: this is the first), ARGV[12]
-- '1' to decide only (a gate's check of every part before it takes any, gate_take): nothing
-- is written, and the answer is {1, holders, in_use, 0, K} when it would be admitted, {0} when
-- not
-- returns {1, holders, in_use, 0, permits held} admitted
--       | {0, holders, in_use, tickets ahead, 0, now} not admitted (now: the server time, which
--         the caller's next tries pass as ARGV[11])
-- A ticket is admitted only when it and every ticket ahead of it fit together: arrival order
-- is kept, and a large request is not passed forever by small ones.
-- @lib clock
-- @lib contention
-- @lib holder
-- @lib history
-- @lib sem
local holders, permits, queue, alive, wants, counter, meta =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local token, limit, want, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local may_queue, heartbeat, wake_prefix = ARGV[5] == '1', tonumber(ARGV[6]), ARGV[7]
local who, cap, last_try = ARGV[8] or '', tonumber(ARGV[9] or '0'), ARGV[10] == '1'
local since, peek = tonumber(ARGV[11] or ''), ARGV[12] == '1'

check_types({'zset', 'hash', 'zset', 'zset', 'hash', 'string', 'hash', 'hash', 'stream', 'zset', 'hash'},
            'semaphore', KEYS, refuse)
local now = server_ms()
if not peek then sem_drop_expired(now, cap) end

-- Whether `member`'s lease or heartbeat in zset `key` ran out by `now`: sem_drop_expired
-- dropped every such one, except for a decision alone, which drops nothing and skips them.
local function lapsed(key, member)
  if not peek then return false end
  local deadline = redis.call('ZSCORE', key, member)
  return deadline ~= false and tonumber(deadline) <= now
end

local function in_use()
  local n = 0
  local all = redis.call('HGETALL', permits)
  for i = 1, #all, 2 do
    if not lapsed(holders, all[i]) then n = n + tonumber(all[i + 1]) end
  end
  return n
end

-- Idle state disappears a minute after the last lease or heartbeat would have ended.
local function keep_alive()
  local horizon = now
  local last = redis.call('ZRANGE', holders, -1, -1, 'WITHSCORES')
  if last[2] then horizon = math.max(horizon, tonumber(last[2])) end
  last = redis.call('ZRANGE', alive, -1, -1, 'WITHSCORES')
  if last[2] then horizon = math.max(horizon, tonumber(last[2])) end
  for i = 1, 8 do
    if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], horizon - now + 60000) end
  end
end

local used = in_use()

if redis.call('ZSCORE', holders, token) and not lapsed(holders, token) then
  -- a holder taking again refreshes its lease
  if peek then return {1, redis.call('ZCOUNT', holders, '(' .. now, '+inf'), used, 0, want} end
  redis.call('ZADD', holders, now + ttl, token)
  keep_alive()
  return {1, redis.call('ZCARD', holders), used, 0, tonumber(redis.call('HGET', permits, token))}
end

local ahead = 0
local ahead_tickets = 0
local my_place = redis.call('ZSCORE', queue, token)
if lapsed(alive, token) then my_place = false end
local before = my_place and redis.call('ZRANGEBYSCORE', queue, '-inf', '(' .. my_place)
  or redis.call('ZRANGE', queue, 0, -1)
for _, t in ipairs(before) do
  if not lapsed(alive, t) then
    ahead = ahead + tonumber(redis.call('HGET', wants, t) or '1')
    ahead_tickets = ahead_tickets + 1
  end
end

if used + ahead + want <= limit then
  if peek then return {1, redis.call('ZCOUNT', holders, '(' .. now, '+inf'), used, 0, want} end
  redis.call('HSET', meta, 'limit', limit)
  redis.call('ZADD', holders, now + ttl, token)
  redis.call('HSET', permits, token, want)
  redis.call('HSET', KEYS[8], token, holder_record(who, now))
  history_add(KEYS[9], cap, 'taken', who, 'token', token, 'permits', want)
  contention_acquired(KEYS[11], since, now)
  redis.call('ZREM', queue, token)
  redis.call('ZREM', alive, token)
  redis.call('HDEL', wants, token)
  redis.call('DEL', wake_prefix .. token)
  used = used + want
  sem_wake_admissible(limit - used, wake_prefix, heartbeat)
  keep_alive()
  return {1, redis.call('ZCARD', holders), used, 0, want}
end

if peek then return {0} end
if may_queue then
  redis.call('HSET', meta, 'limit', limit)
  if not my_place then
    redis.call('ZADD', queue, redis.call('INCR', counter), token)
    redis.call('HSET', wants, token, want)
  end
  redis.call('ZADD', alive, now + heartbeat, token)
  -- Re-wake whoever fits now: a wake-up lost with a killed waiter costs one heartbeat at most.
  sem_wake_admissible(limit - used, wake_prefix, heartbeat)
  keep_alive()
end
if last_try then history_add(KEYS[9], cap, 'busy', who, 'token', token, 'permits', want, 'in_use', used) end
contention_busy(KEYS[11], since)
return {0, redis.call('ZCARD', holders), used, ahead_tickets, 0, now}
