-- queue_peek: the next ready messages, without taking them (due messages become ready first).
-- KEYS[1] messages hash (id -> message), KEYS[2] ready list of ids, KEYS[3] delayed zset
-- (id by due time, ms), KEYS[4] in-flight zset (id by lease deadline, ms), KEYS[5] dead zset
-- (id by time of death, ms), KEYS[6] attempts hash (id -> 'deliveries/max'), KEYS[7] wake
-- list, KEYS[8] id counter, KEYS[9] consumers hash (id -> who .. '\31' .. leased_at), KEYS[10]
-- history stream; all of one {hash tag}
-- ARGV[1] count, ARGV[2] events the history keeps (0: none recorded)
-- returns {id, message, deliveries so far, ...} from the head of the ready list
-- @lib clock
-- @lib history
-- @lib queue
check_queue_keys()
local now = server_ms()

promote(now, tonumber(ARGV[2] or '0'))
return with_messages(redis.call('LRANGE', KEYS[2], 0, tonumber(ARGV[1]) - 1))
