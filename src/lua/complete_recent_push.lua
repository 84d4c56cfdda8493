-- complete_recent_push: put an item first in a capped most-recent-first list, without
-- duplicates (an item already in the list moves to the front).
-- KEYS[1] list; ARGV[1] item, ARGV[2] the most items the list keeps, ARGV[3] expiry in ms
-- (0: none given; the list keeps the expiry it has)
-- returns the list's length afterwards
check_types({'list'}, 'recent list')
redis.call('LREM', KEYS[1], 0, ARGV[1])
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
expire_object(tonumber(ARGV[3]))
return redis.call('LLEN', KEYS[1])
