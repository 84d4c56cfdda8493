-- @no-writes
-- latch_status: the count left.
-- KEYS[1] latch hash {count, initial}
-- returns the count | -1 when there is no such latch
local count = object_field(1, 'count', 'latch')
if not count then return -1 end
return tonumber(count)
