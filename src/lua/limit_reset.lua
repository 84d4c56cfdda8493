-- limit_reset: delete a limit's state, whatever its algorithm.
-- KEYS[1] state hash, KEYS[2] sliding-window log (same hash tag); then the same pair for
-- every further rate a limit can be checked with (`:rate2`, `:rate2:log`, ...)
-- returns the number of keys deleted (0: there was no state)
object_field(1, 'algo', 'limit')
check_types({false, 'zset'})
return redis.call('DEL', unpack(KEYS))
