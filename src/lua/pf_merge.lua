-- pf_merge: merge HyperLogLogs into DEST and give DEST an expiry in the same step
-- (pf merge --expire).
-- KEYS[1] DEST, KEYS[2..] the sources (one slot: on a cluster the caller copies the others
-- under DEST's hash tag first); ARGV[1] expiry in ms
-- returns OK
check_types({'string'}, 'HyperLogLog')
local r = redis.pcall('PFMERGE', unpack(KEYS))
if type(r) == 'table' and r.err then
  return r  -- the caller names the key, as for a plain PFMERGE
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return r
