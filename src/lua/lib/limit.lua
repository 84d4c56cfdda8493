-- limit: the state check and the integer arithmetic every rate-limit script shares (spliced
-- in by cmake/EmbedLua.cmake; inside limit_multi, once in each algorithm's function, where
-- KEYS, refuse and redis are that rate's). Amounts are integers kept in doubles (below 2^53,
-- so exact), written back with fmt, never in the exponent form tostring may choose.

local function fmt(x) return string.format('%d', x) end

-- a / b rounded down, exact: the quotient of the division is corrected by one either way.
local function div_floor(a, b)
  local q = math.floor(a / b)
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end

-- a / b rounded up, exact.
local function div_ceil(a, b)
  local q = div_floor(a, b)
  if q * b < a then q = q + 1 end
  return q
end

-- The limit's state hash KEYS[1] as HMGET gives it, 'algo' then the `...` fields, or nil when
-- there is no state. Refuses a key of another type, a hash that is not an rcoord limit, and
-- the state of another algorithm than `algo` (one name has one algorithm until reset).
local function limit_state(algo, ...)
  local kind = redis.call('TYPE', KEYS[1])['ok']
  if kind == 'none' then return nil end
  if kind ~= 'hash' then refuse(1, 'a ' .. kind .. ' that is not an rcoord limit') end
  local s = redis.call('HMGET', KEYS[1], 'algo', ...)
  if not s[1] then
    refuse(1, 'a hash that is not an rcoord limit')
  end
  if s[1] ~= algo then
    refuse(1, 'an rcoord ' .. s[1] .. ' limit, not a ' .. algo .. ' one', 'use --algo ' .. s[1] .. ', or limit reset')
  end
  return s
end
