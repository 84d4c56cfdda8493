-- lock: the key check every script of a lock shares (spliced in by cmake/EmbedLua.cmake). A
-- lock is KEYS[1] lock hash, KEYS[2] fence counter, KEYS[3] writers' wake list, KEYS[4]
-- readers zset, KEYS[5] waiting writers zset, KEYS[6] waiting readers zset, KEYS[7] readers'
-- fences hash, KEYS[8] readers' identities hash (token -> who .. '\31' .. acquired_at; and
-- lock_kept_mark(token) -> ended_at .. '\31' .. exit_code for a share kept by --min-hold), KEYS[9]
-- history stream, KEYS[10] the writer's open take (both lib/history.lua's, which the
-- scripts splice in before this one), KEYS[11] the watchers of `lock wait`, KEYS[12] the take
-- counters (lib/contention.lua).

-- The field beside reader `token`'s identity in KEYS[8] that says its share was kept by
-- --min-hold after its `released` was recorded (lock_release), so that its lapse is not
-- recorded again, and since when (lock_status). Its unit separator keeps it apart from every
-- token.
local function lock_kept_mark(token)
  return token .. '\31kept'
end

-- The token of the writer that holds the lock, or false when no writer does; which keys of the
-- lock exist (check_types' `present`); and the writer's hash, {token, who, acquired_at,
-- fence} (false when none). Refuses first, before anything is changed, any key of the lock
-- that holds another type (or a lock hash that is not an rcoord lock's).
local function lock_holder()
  local kind = redis.call('TYPE', KEYS[1])['ok']
  local held = false
  if kind ~= 'none' then
    held = kind == 'hash' and redis.call('HMGET', KEYS[1], 'token', 'who', 'acquired_at', 'fence')
    if not (held and held[1]) then refuse(1, 'a ' .. kind .. ' that is not an rcoord lock') end
  end
  local present =
    check_types({false, 'string', 'list', 'zset', 'zset', 'zset', 'hash', 'hash', 'stream', 'string',
                 'zset', 'hash'}, nil, KEYS, refuse)
  present[1] = held ~= false
  return held and held[1], present, held
end

-- What a script that changes the lock does first: leases that ran out since the last look
-- are dropped, and recorded as `expired` in the history (keeping `cap` events): the writer's,
-- when its open take outlived its lock hash (`holder` is false), and each reader's whose
-- deadline passed. Returns how many readers hold the lock afterwards. `present` is
-- lock_holder's.
local function lock_drop_expired(holder, now, cap, present)
  if not holder and present[10] then history_expired(KEYS[10], KEYS[9], cap, 'token', 'fence') end
  if not present[4] then return 0 end
  local readers = redis.call('ZCARD', KEYS[4])
  if readers == 0 then return 0 end  -- the usual case: one call, which answers the count too
  local lapsed = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
  if #lapsed == 0 then return readers end
  for _, r in ipairs(lapsed) do
    -- A share kept by --min-hold had its end recorded when it was kept.
    if redis.call('HDEL', KEYS[8], lock_kept_mark(r)) == 0 then
      local who = string.match(redis.call('HGET', KEYS[8], r) or '', '^(.*)\31%d+$')
      history_add(KEYS[9], cap, 'expired', who, 'token', r, 'mode', 'shared', 'fence',
                  redis.call('HGET', KEYS[7], r))
    end
    redis.call('HDEL', KEYS[7], r)
    redis.call('HDEL', KEYS[8], r)
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
  return readers - #lapsed
end

-- How many readers hold the lock at `now`: what lock_drop_expired answers, without dropping
-- (or recording) anything, for a script that only decides. `present` is lock_holder's.
local function lock_live_readers(now, present)
  if not present[4] then return 0 end
  return redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf')
end

-- Records that `who` (taking with `token`) found the lock held: by the writer (`held_by`, its
-- packed identity) or by readers (how many).
local function lock_record_busy(cap, who, token, waited_ms)
  if cap <= 0 then return end
  local readers = redis.call('ZCARD', KEYS[4])
  history_add(KEYS[9], cap, 'busy', who, 'token', token, 'held_by', redis.call('HGET', KEYS[1], 'who'),
              'readers', readers > 0 and readers, 'waited_ms', waited_ms)
end

-- Moves reader `token`'s lease deadline to `ttl` ms from `now`, and the readers' keys' expiry
-- with the last deadline. Returns the reader's fence, or false when it holds no share (or its
-- share lapsed).
local function lock_extend_reader(token, ttl, now)
  local deadline = redis.call('ZSCORE', KEYS[4], token)
  if not deadline or tonumber(deadline) <= now then return false end
  redis.call('ZADD', KEYS[4], now + ttl, token)
  local last = redis.call('ZRANGE', KEYS[4], -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', KEYS[4], tonumber(last[2]) - now + 1000)
  redis.call('PEXPIRE', KEYS[7], tonumber(last[2]) - now + 1000)
  if redis.call('EXISTS', KEYS[8]) == 1 then redis.call('PEXPIRE', KEYS[8], tonumber(last[2]) - now + 1000) end
  return tonumber(redis.call('HGET', KEYS[7], token) or '0')
end

-- The lock is free now: every caller of `lock wait` (KEYS[11]) is woken and leaves the set.
-- They take nothing, so waking them all costs no waiting taker its turn (the takers' own
-- wake-ups are untouched); a watcher whose heartbeat lapsed is dropped unwoken.
local function lock_wake_watchers(now)
  if not KEYS[11] or redis.call('EXISTS', KEYS[11]) == 0 then return end
  for _, w in ipairs(redis.call('ZRANGEBYSCORE', KEYS[11], '(' .. now, '+inf')) do
    local wake = KEYS[11] .. ':' .. w
    redis.call('RPUSH', wake, '1')
    redis.call('PEXPIRE', wake, 60000)
  end
  redis.call('DEL', KEYS[11])
end
