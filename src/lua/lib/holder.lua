-- holder: who took something, as the take scripts keep it and the status scripts read it
-- (spliced in by cmake/EmbedLua.cmake). A per-token record is the taker's packed identity
-- (src/identity.hpp's pack()) and the server time of the take, joined by the unit separator.

-- The record of a take by `who` (ARGV, nil from a caller that sent none) at `now`.
local function holder_record(who, now)
  return (who or '') .. '\31' .. now
end

-- Appends to `out` the taker kept in hash `key` under `field`: its packed identity ('' when
-- none was kept, e.g. by an older rcoord), the time of the take and how long ago that was
-- (-1 each when unknown).
local function push_holder(out, key, field, now)
  local who, at = string.match(redis.call('HGET', key, field) or '', '^(.*)\31(%d+)$')
  at = tonumber(at)
  table.insert(out, who or '')
  table.insert(out, at or -1)
  table.insert(out, at and math.max(0, now - at) or -1)
end
