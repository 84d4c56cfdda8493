-- queue_replay: put dead messages back on the ready list, with their delivery count reset.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who .. '\31' .. leased_at), KEYS[10]
-- history stream; all of one {hash tag}
-- ARGV[1] events the history keeps (0: none recorded), ARGV[2] who replays them, ARGV[3..] the
-- ids; none: the 1000 that died first
-- returns how many were replayed (ids that are not dead are skipped)
-- @lib clock
-- @lib history
-- @lib queue
check_queue_keys()
local now = server_ms()

local cap, who = tonumber(ARGV[1]), ARGV[2]
local ids = {}
for i = 3, #ARGV do ids[#ids + 1] = ARGV[i] end
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
if replayed > 0 then
  wake()
  history_add(KEYS[10], cap, 'replayed', who, 'count', replayed, 'id', #ids == 1 and ids[1])
end
return replayed
