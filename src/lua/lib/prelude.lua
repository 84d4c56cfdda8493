-- prelude: put before every script of src/lua by cmake/EmbedLua.cmake (a Redis script cannot
-- load another). A script checks its keys with these before it changes anything: Redis does
-- not undo the writes of a script that fails half-way, so a key of another type found late
-- would leave a change half made. The error names the key by its index in KEYS; the client
-- (src/script.cpp) turns it into a message that names the object and the key.

-- A refusal is raised as a table {err = text}: Redis 7 replies with its `err` as it is (an
-- error of class WRONGTYPE). Redis 6.2's error handler concatenates whatever was raised to
-- the script's position instead, so the table also concatenates as its text there.
local refusal_text = {__concat = function(a, b)
  return (type(a) == 'table' and a.err or a) .. (type(b) == 'table' and b.err or b)
end}

-- Fails the script: KEYS[i] holds `what` ('a string', 'a hash that is not an rcoord lock'),
-- and `hint` (optional) says what to do about it.
local function refuse(i, what, hint)
  local text = 'WRONGTYPE KEYS[' .. i .. '] holds ' .. what
  if hint then text = text .. ' (' .. hint .. ')' end
  error(setmetatable({err = text}, refusal_text))
end

-- Refuses any KEYS[i] that exists with another Redis type than kinds[i] ('hash', 'zset',
-- 'list', 'string'; false: not checked). `what` (optional) names the object KEYS[1] is the main
-- key of ('queue'). One TYPE per key, run on the server: no round trip. Returns what the checks
-- saw: present[i] is false for a checked key that does not exist, true otherwise. A script may
-- leave out a call that would find such a key empty, where nothing it ran before made the key.
-- A script run inside another (`-- @include`) passes its own `keys` and `fail` (its KEYS and
-- refuse); without them, the script's global KEYS and refuse are meant.
local function check_types(kinds, what, keys, fail)
  keys, fail = keys or KEYS, fail or refuse
  local present = {}
  for i = 1, #keys do
    local want = kinds[i]
    present[i] = true
    if want then
      local kind = redis.call('TYPE', keys[i])['ok']
      if kind == 'none' then
        present[i] = false
      elseif kind ~= want then
        if i == 1 and what then fail(i, 'a ' .. kind .. ' that is not an rcoord ' .. what) end
        fail(i, 'a ' .. kind .. ', not the ' .. want .. ' rcoord keeps there')
      end
    end
  end
  return present
end

-- The main hash of an object, KEYS[i]: the value of its `field`, or false when the key does
-- not exist. A key of another type, or a hash without that field (someone else's hash), is
-- refused as not an rcoord `what`.
local function object_field(i, field, what)
  local kind = redis.call('TYPE', KEYS[i])['ok']
  if kind == 'none' then return false end
  local value = kind == 'hash' and redis.call('HGET', KEYS[i], field)
  if not value then refuse(i, 'a ' .. kind .. ' that is not an rcoord ' .. what) end
  return value
end

-- Gives the object of KEYS an end (--expire): with ms > 0 every key of KEYS that exists
-- expires ms from now (each write that gives --expire sets it again); with ms = 0 a key that
-- has no expiry takes the one the object's other keys have, so a key added later (a Bloom
-- layer, an index's scores) never outlives the rest. Call it after the writes of the script:
-- a key never exists without its expiry outside the script. The expiry is carried as a time
-- left (PTTL, PEXPIRE), not as a moment (PEXPIRETIME is Redis 7.0's): a script reads one clock
-- throughout on Redis 7, so the moments are equal there, and within the script's run (well
-- under a millisecond) on 6.2.
local function expire_object(ms)
  if ms > 0 then
    for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ms) end
    return
  end
  local left = -1
  for i = 1, #KEYS do
    local t = redis.call('PTTL', KEYS[i])
    if t > 0 then
      left = t
      break
    end
  end
  if left < 0 then return end
  for i = 1, #KEYS do
    if redis.call('PTTL', KEYS[i]) == -1 then redis.call('PEXPIRE', KEYS[i], left) end
  end
end
