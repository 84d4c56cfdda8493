-- queue_push: add messages, ready now or after a delay.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who .. '\31' .. leased_at), KEYS[10]
-- history stream; all of one {hash tag}
-- ARGV[1] delay ms (0: ready now), ARGV[2..] the messages
-- returns the number of messages waiting (ready + delayed) afterwards
-- @lib clock
-- @lib history
-- @lib queue
check_queue_keys()
local now = server_ms()

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
