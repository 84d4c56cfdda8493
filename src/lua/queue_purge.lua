-- queue_purge: delete waiting messages (ready and delayed), or the dead ones; never those in
-- flight. Up to 1000 per call, so the server never stalls on a long queue.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who .. '\31' .. leased_at), KEYS[10]
-- history stream; all of one {hash tag}
-- ARGV[1] 'dead' or 'waiting', ARGV[2] events the history keeps (0: none recorded), ARGV[3] who
-- purges
-- returns how many messages were deleted (fewer than 1000: nothing is left)
-- @lib clock
-- @lib history
-- @lib queue
check_queue_keys()
local now = server_ms()

local function drop(ids)
  for _, id in ipairs(ids) do
    redis.call('HDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[6], id)
    redis.call('HDEL', KEYS[9], id)
  end
  return #ids
end

local cap, who = tonumber(ARGV[2] or '0'), ARGV[3]
local function recorded(count)
  if count > 0 then history_add(KEYS[10], cap, 'purged', who, 'what', ARGV[1], 'count', count) end
  return count
end

local purged = 0
if ARGV[1] == 'dead' then
  local ids = redis.call('ZRANGE', KEYS[5], 0, 999)
  if #ids > 0 then redis.call('ZREM', KEYS[5], unpack(ids)) end
  return recorded(drop(ids))
end
local ids = redis.call('LRANGE', KEYS[2], 0, 999)
redis.call('LTRIM', KEYS[2], #ids, -1)
purged = drop(ids)
if purged < 1000 then
  ids = redis.call('ZRANGE', KEYS[3], 0, 999 - purged)
  if #ids > 0 then redis.call('ZREM', KEYS[3], unpack(ids)) end
  purged = purged + drop(ids)
end
return recorded(purged)
