-- history: the capped event log of a lock, semaphore, election or queue (SPEC §5 history),
-- appended by the same script that made the change (spliced in by cmake/EmbedLua.cmake). It
-- is a stream on the object's hash tag; an entry's id is the server's time of the event.

-- The log expires this long after its newest event.
local HISTORY_LIFE_MS = 7 * 24 * 3600 * 1000

-- A field's value as the stream keeps it: integers without an exponent (Lua's tostring
-- writes 1e+15).
local function history_value(v)
  if type(v) == 'number' then return string.format('%d', v) end
  return tostring(v)
end

-- How many entries the log `key` keeps, given a call's own --history `cap` (> 0): the largest
-- cap any call gave while the log lived, kept beside it in `<key>:cap` (same hash tag, same
-- expiry), so that one caller's small --history never trims what the log keeps for the others.
local function history_keep(key, cap)
  local cap_key = key .. ':cap'
  local kept = tonumber(redis.call('GET', cap_key) or '') or 0
  if cap > kept then kept = cap end
  redis.call('SET', cap_key, kept, 'PX', HISTORY_LIFE_MS)
  return kept
end

-- Appends `event` to the stream `key`, which keeps its newest entries (history_keep; with cap
-- 0, nothing is recorded), with `who` (the packed identity of who caused it; '' or nil when
-- unknown) and then pairs of field name and value; a value that is nil, false or '' is left
-- out.
local function history_add(key, cap, event, who, ...)
  if cap <= 0 then return end
  local args = {'XADD', key, 'MAXLEN', history_keep(key, cap), '*', 'event', event}
  if who and who ~= '' then
    table.insert(args, 'who')
    table.insert(args, who)
  end
  local n = select('#', ...)
  local fields = {...}
  for i = 1, n, 2 do
    local v = fields[i + 1]
    if v ~= nil and v ~= false and v ~= '' then
      table.insert(args, fields[i])
      table.insert(args, history_value(v))
    end
  end
  redis.call(unpack(args))
  redis.call('PEXPIRE', key, HISTORY_LIFE_MS)
end

-- An open take that may end without a word (a lease that runs out): `key` keeps its token
-- (an election: the leader's id), who and fence (or term), so that the next script to find
-- the lease gone records `expired` for it. Only kept while history is recorded.
local function history_open(key, cap, token, who, fence)
  if cap <= 0 then return end
  local open = token .. '\31' .. (who or '') .. '\31' .. history_value(fence)
  redis.call('SET', key, open, 'PX', HISTORY_LIFE_MS)
end

-- The take of `key` ended in a way that is recorded: it is no longer open.
local function history_close(key)
  redis.call('DEL', key)
end

-- The lease that `key` keeps open is gone (its holder's key expired): records `expired` for
-- it in `history`, naming its parts `token_field` ('token', 'id') and `number_field`
-- ('fence', 'term'). Returns the token whose lease ran out, or false when none was open.
local function history_expired(key, history, cap, token_field, number_field)
  local open = redis.call('GET', key)
  if not open then return false end
  redis.call('DEL', key)
  local token, who, number = string.match(open, '^(.-)\31(.*)\31(%d*)$')
  if not token then return false end
  history_add(history, cap, 'expired', who, token_field, token, number_field, number)
  return token
end
