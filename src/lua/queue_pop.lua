-- queue_pop: move what is due back to ready, then hand out up to ARGV[1] ready messages.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter; all of one {hash tag}
-- ARGV[1] count, ARGV[2] '1': newest first (LIFO), ARGV[3] lease ms (0: plain pop, the
-- message is deleted as it is handed out), ARGV[4] max deliveries per message, ARGV[5] '1':
-- the caller blocks next when this finds nothing (it then owns the wake-up it consumes)
-- returns {next_ms, id, message, attempt, id, message, attempt, ...}; next_ms is 0 when more
-- is ready now, else the ms until the next delayed message or lease is due, -1 if none is
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

-- Moves what is due back to the ready list: delayed messages whose time has come, and
-- leases that ran out (or to the dead set, when that delivery was the last one allowed).
-- At most 100 of each per call, so a script never runs long; what is left stays due and the
-- caller comes back at once. Returns how many became ready. (Same code in queue_pop,
-- queue_peek, queue_stats and queue_dead: a script cannot include another.)
local function promote()
  local ready = 0
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, 100)) do
    redis.call('ZREM', KEYS[3], id)
    redis.call('RPUSH', KEYS[2], id)
    ready = ready + 1
  end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, 100)) do
    redis.call('ZREM', KEYS[4], id)
    local n, max = attempts_of(id)
    if max > 0 and n >= max then
      redis.call('ZADD', KEYS[5], now, id)
    else
      redis.call('RPUSH', KEYS[2], id)
      ready = ready + 1
    end
  end
  if ready > 0 then wake() end
  return ready
end

local count = tonumber(ARGV[1])
local lease = tonumber(ARGV[3])
local max = tonumber(ARGV[4])
promote()
local before = earliest()
local out = {0}
local handed = 0
local granted = false
-- A message delivered max times already goes to the dead set instead; bound that work too.
local budget = count + 100
while handed < count and budget > 0 do
  budget = budget - 1
  local id
  if ARGV[2] == '1' then
    id = redis.call('RPOP', KEYS[2])
  else
    id = redis.call('LPOP', KEYS[2])
  end
  if not id then break end
  local message = redis.call('HGET', KEYS[1], id)
  if message then
    local n = attempts_of(id)
    if n >= max then
      redis.call('ZADD', KEYS[5], now, id)
    else
      if lease > 0 then
        redis.call('HSET', KEYS[6], id, (n + 1) .. '/' .. max)
        redis.call('ZADD', KEYS[4], now + lease, id)
        granted = true
      else
        redis.call('HDEL', KEYS[1], id)
        redis.call('HDEL', KEYS[6], id)
      end
      handed = handed + 1
      out[#out + 1] = id
      out[#out + 1] = message
      out[#out + 1] = n + 1
    end
  end
end

local ready = redis.call('LLEN', KEYS[2])
if ready > 0 or (granted and (not before or now + lease < before)) then
  -- Others may take what is left; a new lease that ends before anything else is due must
  -- shorten the sleep of blocked poppers, or they would miss its expiry.
  wake()
elseif ARGV[5] == '1' then
  -- This caller knows everything pending now; a stale wake-up would only spin it.
  redis.call('DEL', KEYS[7])
end
if ready == 0 then
  local first = earliest()
  if first then out[1] = math.max(0, first - now) else out[1] = -1 end
end
return out
