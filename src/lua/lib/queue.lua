-- queue: the key check and helpers every queue script shares (spliced in by
-- cmake/EmbedLua.cmake). A queue is KEYS[1] messages hash (id -> message), KEYS[2] ready list
-- of ids, KEYS[3] delayed zset (id by due time, ms), KEYS[4] in-flight zset (id by lease
-- deadline, ms), KEYS[5] dead zset (id by time of death, ms), KEYS[6] attempts hash (id ->
-- 'deliveries/max'), KEYS[7] wake list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who ..
-- '\31' .. leased_at), KEYS[10] history stream (lib/history.lua, spliced in before this one);
-- all of one {hash tag}.

-- Refuses, before anything is changed, a key of the queue that holds another type, and a
-- hash of messages that no push made (no id counter, no message referenced anywhere): that is
-- someone else's data under this name, whose fields must not be taken for messages.
local function check_queue_keys()
  check_types({'hash', 'list', 'zset', 'zset', 'zset', 'hash', 'list', 'string', 'hash', 'stream'}, 'queue')
  if redis.call('EXISTS', KEYS[1]) == 1 and
      redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[8]) == 0 then
    refuse(1, 'a hash that is not an rcoord queue')
  end
end

-- 'deliveries/max' of a message: how often it was handed out, and the most it may be.
local function attempts_of(id)
  local record = redis.call('HGET', KEYS[6], id)
  if not record then return 0, 0 end
  local n, max = string.match(record, '^(%d+)/(%d+)$')
  return tonumber(n) or 0, tonumber(max) or 0
end

-- Whether message `id` is leased, by delivery `delivery` ('0': whichever delivery is current):
-- an ack, extend or nack of a delivery whose lease was reclaimed must not touch a newer one.
local function leased(id, delivery)
  if not redis.call('ZSCORE', KEYS[4], id) then return false end
  return delivery == '0' or attempts_of(id) == tonumber(delivery)
end

-- The messages of `ids` still kept, flat: {id, message, deliveries so far, ...}.
local function with_messages(ids)
  local out = {}
  for _, id in ipairs(ids) do
    local message = redis.call('HGET', KEYS[1], id)
    if message then
      out[#out + 1] = id
      out[#out + 1] = message
      out[#out + 1] = (attempts_of(id))
    end
  end
  return out
end

-- Message `id` goes to the dead set at `now` after `attempts` deliveries; the history
-- (keeping `cap` events) records it with `who`, the consumer of its last delivery.
local function bury(id, now, cap, who, attempts)
  redis.call('ZADD', KEYS[5], now, id)
  history_add(KEYS[10], cap, 'dead', who, 'id', id, 'attempts', attempts)
end

-- The packed identity of the consumer that leased message `id` (nil when none is kept).
local function consumer_of(id)
  return string.match(redis.call('HGET', KEYS[9], id) or '', '^(.*)\31%d+$')
end

-- The earliest moment something pending becomes due, or nil: blocked poppers sleep until then.
local function earliest()
  local first = nil
  for i = 3, 4 do
    local head = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
    if head[2] and (not first or tonumber(head[2]) < first) then first = tonumber(head[2]) end
  end
  return first
end

-- One element on the wake list wakes every blocked popper (they peek with BLMOVE).
local function wake()
  if redis.call('LLEN', KEYS[7]) == 0 then redis.call('RPUSH', KEYS[7], '1') end
  redis.call('PEXPIRE', KEYS[7], 60000)
end

-- Moves what is due at `now` (server ms) back to the ready list: delayed messages whose time
-- has come, and leases that ran out (or to the dead set, when that delivery was the last one
-- allowed; recorded in the history, which keeps `cap` events). At most 100 of each per call,
-- so a script never runs long; what is left stays due and the caller comes back at once.
-- Returns how many became ready.
local function promote(now, cap)
  local ready = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 100)) do
    redis.call('ZREM', KEYS[3], id)
    redis.call('RPUSH', KEYS[2], id)
    ready = ready + 1
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, 100)) do
    redis.call('ZREM', KEYS[4], id)
    local who = consumer_of(id)
    redis.call('HDEL', KEYS[9], id)
    local n, max = attempts_of(id)
    if max > 0 and n >= max then
      bury(id, now, cap, who, n)
    else
      redis.call('RPUSH', KEYS[2], id)
      ready = ready + 1
    end
  end
  if ready > 0 then wake() end
  return ready
end
