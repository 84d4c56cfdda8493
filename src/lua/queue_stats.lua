-- queue_stats: how many messages are where (due messages become ready first).
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who .. '\31' .. leased_at), KEYS[10]
-- history stream; all of one {hash tag}
-- returns {ready, delayed, in_flight, dead}
-- @lib clock
-- @lib history
-- @lib queue
check_queue_keys()
local now = server_ms()

promote(now, tonumber(ARGV[1] or '0'))
return {redis.call('LLEN', KEYS[2]), redis.call('ZCARD', KEYS[3]), redis.call('ZCARD', KEYS[4]),
        redis.call('ZCARD', KEYS[5])}
