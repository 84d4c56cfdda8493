-- pf_add: add items to a HyperLogLog and give it an expiry in the same step (pf add --expire).
-- KEYS[1] the HyperLogLog; ARGV[1] expiry in ms, ARGV[2..] items
-- returns 1 when the estimate changed, else 0
check_types({'string'}, 'HyperLogLog')
local changed = 0
local first = 2
while first <= #ARGV do
  local last = math.min(#ARGV, first + 99)  -- unpack() has a limit: PFADD 100 at a time
  local r = redis.pcall('PFADD', KEYS[1], unpack(ARGV, first, last))
  if type(r) == 'table' and r.err then refuse(1, 'a string that is not an rcoord HyperLogLog') end
  if r == 1 then changed = 1 end
  first = last + 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return changed
