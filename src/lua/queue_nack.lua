-- queue_nack: a leased message was not handled: make it ready again (now or after a delay),
-- or dead when that was its last allowed delivery.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter; all of one {hash tag}
-- ARGV[1] id, ARGV[2] the delivery (attempt) it must be, or 0 for whichever is current,
-- ARGV[3] delay ms, ARGV[4] '1': give it back uncounted, at the head (the consumer stopped
-- before it started the work, so this delivery did not happen)
-- returns 0 not in flight | 1 ready | 2 delayed | 3 dead
check_types({'hash', 'list', 'zset', 'zset', 'zset', 'hash', 'list', 'string'}, 'queue')
-- A hash of messages that no push made (no id counter, no message referenced anywhere) is
-- someone else's data under this name: refuse it rather than treat its fields as messages.
if redis.call('EXISTS', KEYS[1]) == 1 and
    redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[8]) == 0 then
  refuse(1, 'a hash that is not an rcoord queue')
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

-- 'deliveries/max' of a message: how often it was handed out, and the most it may be.
local function attempts_of(id)
  local record = redis.call('HGET', KEYS[6], id)
  if not record then return 0, 0 end
  local n, max = string.match(record, '^(%d+)/(%d+)$')
  return tonumber(n) or 0, tonumber(max) or 0
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

-- The lease of ARGV[1] exists, and belongs to delivery ARGV[2] (0: whichever delivery).
local function held()
  if not redis.call('ZSCORE', KEYS[4], ARGV[1]) then return false end
  return ARGV[2] == '0' or attempts_of(ARGV[1]) == tonumber(ARGV[2])
end

if not held() then return 0 end
local id = ARGV[1]
local n, max = attempts_of(id)
local delay = tonumber(ARGV[3])
local before = earliest()
redis.call('ZREM', KEYS[4], id)
if ARGV[4] == '1' then
  if n > 1 then
    redis.call('HSET', KEYS[6], id, (n - 1) .. '/' .. max)
  else
    redis.call('HDEL', KEYS[6], id)
  end
  redis.call('LPUSH', KEYS[2], id)
  wake()
  return 1
end
if max > 0 and n >= max then
  redis.call('ZADD', KEYS[5], now, id)
  return 3
end
if delay > 0 then
  redis.call('ZADD', KEYS[3], now + delay, id)
  if not before or now + delay < before then wake() end
  return 2
end
redis.call('RPUSH', KEYS[2], id)
wake()
return 1
