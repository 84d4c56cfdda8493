-- queue_nack: a leased message was not handled: make it ready again (now or after a delay),
-- or dead when that was its last allowed delivery.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who .. '\31' .. leased_at), KEYS[10]
-- history stream; all of one {hash tag}
-- ARGV[1] id, ARGV[2] the delivery (attempt) it must be, or 0 for whichever is current,
-- ARGV[3] delay ms, ARGV[4] '1': give it back uncounted, at the head (the consumer stopped
-- before it started the work, so this delivery did not happen), ARGV[5] events the history
-- keeps (0: none recorded)
-- returns 0 not in flight | 1 ready | 2 delayed | 3 dead
-- @lib clock
-- @lib history
-- @lib queue
check_queue_keys()
local now = server_ms()

if not leased(ARGV[1], ARGV[2]) then return 0 end
local id = ARGV[1]
local n, max = attempts_of(id)
local delay = tonumber(ARGV[3])
local before = earliest()
redis.call('ZREM', KEYS[4], id)
local who = consumer_of(id)
redis.call('HDEL', KEYS[9], id)
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
  bury(id, now, tonumber(ARGV[5] or '0'), who, n)
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
