-- latch_init: create a count-down latch; an existing one is left as it is.
-- KEYS[1] latch hash {count, initial}
-- ARGV[1] count, ARGV[2] ttl_ms or '' (no expiry), ARGV[3] channel announcing that it opened
-- returns {1, count} created | {0, count} it exists already (its count)
local count = object_field(1, 'count', 'latch')
if count then return {0, tonumber(count)} end
redis.call('HSET', KEYS[1], 'count', ARGV[1], 'initial', ARGV[1])
if ARGV[2] ~= '' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if tonumber(ARGV[1]) == 0 then redis.call('PUBLISH', ARGV[3], '0') end
return {1, tonumber(ARGV[1])}
