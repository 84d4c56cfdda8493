-- gate_record: write a gate's record (the parts its token holds), with the parts' TTL.
-- KEYS[1] the record hash `<prefix>{gate:TOKEN}`
-- ARGV[1] ttl_ms, ARGV[2..] field, value pairs (`n` the number of parts, `1`..`n` each part)
-- returns 1
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
