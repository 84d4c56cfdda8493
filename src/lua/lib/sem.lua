-- sem: what the scripts that change a semaphore share (spliced in by cmake/EmbedLua.cmake,
-- after lib/history.lua). KEYS as sem_take: KEYS[1] holders zset, KEYS[2] permits hash,
-- KEYS[3] queue zset, KEYS[4] alive zset, KEYS[5] wants hash, KEYS[8] who hash, KEYS[9]
-- history stream, KEYS[10] the watchers zset of `sem wait` (`<most in use>:<token>` ->
-- heartbeat deadline; each one's wake list is KEYS[10] .. ':' .. its member).

-- Holders whose lease ran out (recorded as `expired` in the history, keeping `cap` events)
-- and tickets whose waiter stopped refreshing are gone.
local function sem_drop_expired(now, cap)
  for _, h in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
    local who = string.match(redis.call('HGET', KEYS[8], h) or '', '^(.*)\31%d+$')
    history_add(KEYS[9], cap, 'expired', who, 'token', h, 'permits', redis.call('HGET', KEYS[2], h))
    redis.call('HDEL', KEYS[2], h)
    redis.call('HDEL', KEYS[8], h)
    redis.call('ZREM', KEYS[1], h)
  end
  for _, w in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)) do
    redis.call('ZREM', KEYS[3], w)
    redis.call('HDEL', KEYS[5], w)
    redis.call('ZREM', KEYS[4], w)
  end
end

-- Wakes every waiting ticket, in arrival order, that fits in `room` free permits together
-- with all the ones ahead of it (its wake list `wake_prefix`..ticket, kept two heartbeats).
-- True when one was woken.
local function sem_wake_admissible(room, wake_prefix, heartbeat)
  local woken = false
  for _, t in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    room = room - tonumber(redis.call('HGET', KEYS[5], t) or '1')
    if room < 0 then break end
    local wake = wake_prefix .. t
    redis.call('DEL', wake)
    redis.call('RPUSH', wake, '1')
    redis.call('PEXPIRE', wake, heartbeat * 2)
    woken = true
  end
  return woken
end

-- Wakes every caller of `sem wait` (KEYS[10]) that `used` permits in use now satisfy: the
-- most its member allows (`<most in use>:<token>`) is at least `used`. Woken watchers leave
-- the set; they take nothing, so no queued taker loses its turn to them. Watchers whose
-- heartbeat lapsed are dropped unwoken.
local function sem_wake_watchers(used, now)
  if not KEYS[10] or redis.call('EXISTS', KEYS[10]) == 0 then return end
  redis.call('ZREMRANGEBYSCORE', KEYS[10], '-inf', now)
  for _, w in ipairs(redis.call('ZRANGE', KEYS[10], 0, -1)) do
    local most = tonumber(string.match(w, '^(%d+):'))
    if most and used <= most then
      local wake = KEYS[10] .. ':' .. w
      redis.call('RPUSH', wake, '1')
      redis.call('PEXPIRE', wake, 60000)
      redis.call('ZREM', KEYS[10], w)
    end
  end
end
