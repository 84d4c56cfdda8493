-- lock: the key check every script of a lock shares (spliced in by cmake/EmbedLua.cmake). A
-- lock is KEYS[1] lock hash, KEYS[2] fence counter, KEYS[3] writers' wake list, KEYS[4]
-- readers zset, KEYS[5] waiting writers zset, KEYS[6] waiting readers zset, KEYS[7] readers'
-- fences hash, KEYS[8] readers' identities hash (token -> who .. '\31' .. acquired_at).

-- The token of the writer that holds the lock, or false when no writer does. Refuses first,
-- before anything is changed, any key of the lock that holds another type (or a lock hash
-- that is not an rcoord lock's).
local function lock_holder()
  local holder = object_field(1, 'token', 'lock')
  check_types({false, 'string', 'list', 'zset', 'zset', 'zset', 'hash', 'hash'})
  return holder
end
