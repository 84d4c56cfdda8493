-- queue_push: add messages, ready now or after a delay.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter; all of one {hash tag}
-- ARGV[1] delay ms (0: ready now), ARGV[2..] the messages
-- returns the number of messages waiting (ready + delayed) afterwards
check_types({'hash', 'list', 'zset', 'zset', 'zset', 'hash', 'list', 'string'}, 'queue')
-- A hash of messages that no push made (no id counter, no message referenced anywhere) is
-- someone else's data under this name: refuse it rather than treat its fields as messages.
if redis.call('EXISTS', KEYS[1]) == 1 and
    redis.call('EXISTS', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[8]) == 0 then
  refuse(1, 'a hash that is not an rcoord queue')
end
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)

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

local delay = tonumber(ARGV[1])
local due = now + delay
local before = earliest()
for i = 2, #ARGV do
  -- HSETNX: should the counter ever be reset by hand, an id still in use is skipped, never
  -- overwritten.
  local id
  repeat
    id = tostring(redis.call('INCR', KEYS[8]))
  until redis.call('HSETNX', KEYS[1], id, ARGV[i]) == 1
  if delay > 0 then
    redis.call('ZADD', KEYS[3], due, id)
  else
    redis.call('RPUSH', KEYS[2], id)
  end
end
if #ARGV > 1 and (delay == 0 or not before or due < before) then wake() end
return redis.call('LLEN', KEYS[2]) + redis.call('ZCARD', KEYS[3])
