-- pf_add_registers: merge registers the client computed (a dense HyperLogLog) into a
-- HyperLogLog that is already dense, as a large pf add does instead of sending its items.
-- KEYS[1] the HyperLogLog; KEYS[2] a scratch key in its slot, used only inside this script;
-- ARGV[1] the registers; ARGV[2] expiry in ms (0: keep the key's own)
-- returns 1 when a register grew (the estimate changed), 0 when none did, -1 when nothing
-- was done: the key is missing, sparse, or not a HyperLogLog (the client then sends the
-- items as PFADD, so a small key stays sparse and a foreign one is refused as PFADD does)
check_types({'string', 'string'}, 'HyperLogLog')
local old = redis.call('GET', KEYS[1])
if not old or string.sub(old, 1, 4) ~= 'HYLL' or string.byte(old, 5) ~= 0 then return -1 end
redis.call('SET', KEYS[2], ARGV[1])
local merged = redis.pcall('PFMERGE', KEYS[1], KEYS[2])
redis.call('DEL', KEYS[2])
if type(merged) == 'table' and merged.err then return merged end
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
-- The header holds a cached count PFMERGE marks stale; a change is in the registers.
if string.sub(redis.call('GET', KEYS[1]), 17) ~= string.sub(old, 17) then return 1 end
return 0
