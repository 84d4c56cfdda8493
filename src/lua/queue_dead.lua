-- queue_dead: a page of the dead-letter set, oldest death first (expired last leases first
-- move there).
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who .. '\31' .. leased_at), KEYS[10]
-- history stream; all of one {hash tag}
-- ARGV[1] offset, ARGV[2] count, ARGV[3] events the history keeps (0: none recorded)
-- returns {id, message, deliveries, ...}
-- @lib clock
-- @lib history
-- @lib queue
check_queue_keys()
local now = server_ms()

promote(now, tonumber(ARGV[3] or '0'))
local first = tonumber(ARGV[1])
return with_messages(redis.call('ZRANGE', KEYS[5], first, first + tonumber(ARGV[2]) - 1))
