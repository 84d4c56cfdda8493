-- queue_replay: put dead messages back on the ready list, with their delivery count reset.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter; all of one {hash tag}
-- ARGV[1..]: the ids; none: the 1000 that died first
-- returns how many were replayed (ids that are not dead are skipped)
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

local ids = ARGV
if #ids == 0 then ids = redis.call('ZRANGE', KEYS[5], 0, 999) end
local replayed = 0
for _, id in ipairs(ids) do
  if redis.call('ZREM', KEYS[5], id) == 1 then
    redis.call('HDEL', KEYS[6], id)
    if redis.call('HEXISTS', KEYS[1], id) == 1 then
      redis.call('RPUSH', KEYS[2], id)
      replayed = replayed + 1
    end
  end
end
if replayed > 0 then wake() end
return replayed
