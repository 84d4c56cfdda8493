-- complete_recent_push: put an item first in a capped most-recent-first list, without
-- duplicates (an item already in the list moves to the front).
-- KEYS[1] list; ARGV[1] item, ARGV[2] the most items the list keeps
-- returns the list's length afterwards
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'none' and kind ~= 'list' then
  return redis.error_reply('WRONGTYPE key ' .. KEYS[1] .. ' holds a ' .. kind .. ' that is not an rcoord recent list')
end
redis.call('LREM', KEYS[1], 0, ARGV[1])
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
return redis.call('LLEN', KEYS[1])
