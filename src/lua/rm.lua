-- rm: delete every key of one object (rcoord rm) unless it is in use, in one step, so no
-- take can slip in between the check and the delete.
-- KEYS: the object's keys that go, KEYS[1] its main key (same {hash tag}). Counters that must
-- never hand out a number twice (a lock's fences, an election's terms, a queue's ids) are
-- not among them: they stay.
-- An object removed while in use (--force) keeps its history, with a `removed` event naming who
-- removed it and what it held, so that the log outlives the object by its own expiry.
-- ARGV[1] type tag (lock, sem, ...), ARGV[2] '1' to remove what is in use (--force), ARGV[3]
-- '1' to change nothing (--dry-run), ARGV[4] what the object is called in errors ('lock',
-- 'semaphore'...), ARGV[5] (bloom) the layer count the caller knows, ARGV[6] the index in KEYS
-- of the object's history stream (0: it has none; its cap is the key after it), ARGV[7] events
-- the history keeps (0: none recorded), ARGV[8] who removes it (src/identity.hpp's pack()),
-- ARGV[9..] the Redis type each key must have ('' for any)
-- returns {status, keys, reason}: status 1 removed (with --dry-run: would be), 0 in use
-- (reason says how; nothing changed), -1 nothing to remove, -2 (bloom) the filter has
-- another layer count: re-read it and call again. keys: how many keys go (or would).
-- @lib clock
-- @lib history
local kind, force, dry = ARGV[1], ARGV[2] == '1', ARGV[3] == '1'
local history, cap, who = tonumber(ARGV[6]), tonumber(ARGV[7]), ARGV[8]
local kinds = {}
for i = 1, #KEYS do kinds[i] = ARGV[8 + i] ~= '' and ARGV[8 + i] end
check_types(kinds, ARGV[4])
-- A main hash is rcoord's only with the field rcoord always writes there, as its own verbs
-- check (a lock's token, a latch's count, ...): another hash is refused, not deleted.
local markers = {lock = 'token', elect = 'id', latch = 'count', limit = 'algo', bloom = 'layers'}
if markers[kind] then object_field(1, markers[kind], ARGV[4]) end
local existing = 0
for i = 1, #KEYS do existing = existing + redis.call('EXISTS', KEYS[i]) end
if existing == 0 then return {-1, 0, ''} end
local now = server_ms()

-- Why the object is in use ('' when it is not), and what it held as fields of a `removed`
-- event.
local function in_use()
  if kind == 'lock' then
    -- KEYS: lock hash, writers' wake list, readers zset, waiting writers, waiting readers,
    -- readers' fences
    local token = redis.call('HGET', KEYS[1], 'token')
    if token and token ~= '' then
      local held = redis.call('HMGET', KEYS[1], 'fence', 'who', 'acquired_at')
      local at = tonumber(held[3] or '')
      return 'held (fence ' .. (held[1] or '?') .. ')',
        {'token', token, 'fence', held[1], 'held_by', held[2], 'held_ms', at and now - at}
    end
    local readers = redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf')
    if readers > 0 then
      return 'held by ' .. readers .. ' reader(s)', {'mode', 'shared', 'readers', readers}
    end
  elseif kind == 'sem' then
    -- KEYS: holders zset (token -> lease deadline), permits hash, ...
    local holders = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
    if holders > 0 then return holders .. ' holder(s)', {'holders', holders} end
  elseif kind == 'elect' then
    -- KEYS: leader hash (its TTL is the lease), wake list
    local led = redis.call('HMGET', KEYS[1], 'id', 'term', 'who', 'acquired_at')
    if led[1] then
      local at = tonumber(led[4] or '')
      return 'led by ' .. led[1] .. ' (term ' .. (led[2] or '?') .. ')',
        {'id', led[1], 'term', led[2], 'held_by', led[3], 'held_ms', at and now - at}
    end
  elseif kind == 'queue' then
    -- KEYS: messages, ready, delayed, in-flight zset (id -> lease deadline), ...
    local leased = redis.call('ZCOUNT', KEYS[4], '(' .. now, '+inf')
    if leased > 0 then return leased .. ' message(s) in flight', {'in_flight', leased} end
  elseif kind == 'bloom' then
    local layers = redis.call('HGET', KEYS[1], 'layers')
    if layers and tonumber(layers) ~= tonumber(ARGV[5]) then return false end
  end
  return '', {}
end

local why, held = in_use()
if why == false then return {-2, existing, ''} end
if why ~= '' and not force then return {0, existing, why} end
-- Removed while in use: the history and its cap stay, with the event that says so.
local keep = {}
if why ~= '' and history > 0 and cap > 0 then
  for _, i in ipairs({history, history + 1}) do
    keep[i] = true
    existing = existing - redis.call('EXISTS', KEYS[i])
  end
  if not dry then history_add(KEYS[history], cap, 'removed', who, unpack(held)) end
end
if not dry then
  -- UNLINK: a large layer is freed in the background.
  for i = 1, #KEYS do
    if not keep[i] then redis.call('UNLINK', KEYS[i]) end
  end
end
return {1, existing, why}
