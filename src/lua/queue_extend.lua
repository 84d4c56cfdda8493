-- queue_extend: renew a lease, so a slow consumer keeps its message.
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who .. '\31' .. leased_at), KEYS[10]
-- history stream; all of one {hash tag}
-- ARGV[1] id, ARGV[2] the delivery (attempt) it must be, or 0 for whichever is current,
-- ARGV[3] lease ms from now
-- returns 1 extended | 0 not in flight for this delivery
-- @lib clock
-- @lib history
-- @lib queue
check_queue_keys()
local now = server_ms()

if not leased(ARGV[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[4], 'XX', now + tonumber(ARGV[3]), ARGV[1])
return 1
