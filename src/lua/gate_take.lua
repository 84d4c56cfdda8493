-- gate_take: one try of a whole gate on one server, all or nothing in one step (SPEC §6): every
-- part is first decided without writing anything, each by its own take script run here as a
-- function in its decide-only mode (lock_acquire, lock_acquire_shared, sem_take; a rate by
-- limit_gcra's peek), in the gate's order (rates last); only if every part would be
-- granted is each taken for real, in the same order, by the same scripts, and the gate's
-- record written (gate_record). A lock or semaphore part that would refuse is tried for real
-- alone, so that its refusal is answered, counted, recorded and enlisted (a waiter) as its own
-- take does; a rate that would refuse consumes nothing. So a refused gate takes nothing and
-- writes nothing to the parts before the one that refused, nor to any after it. The server's
-- TIME is read once: the decisions and the takes see one instant, and agree.
-- The gate's own take counters (lib/contention.lua) count the call as a whole: `acquired` once
-- every part is taken, `busy` at its first refusal, and the wait from that refusal.
-- KEYS: per part, the keys its take script is given (in the order of ARGV's parts), then the
-- record hash `<prefix>{gate:TOKEN}`, then the gate's counters `<prefix>{gate:PARTS}:stats`.
-- On one server only: the parts' keys have different hash tags (a Redis Cluster refuses the
-- script, CROSSSLOT, before it runs).
-- ARGV[1] n, the number of parts, then per part: its type (`lock`, `shared-lock`, `sem`,
-- `rate`), how many keys and how many arguments its script takes, and those arguments (as
-- for a take of its own: a rate's are limit_gcra's, not a peek); then the server time (ms) of
-- this call's first refusal ('': none yet); then gate_record's ARGV.
-- returns {1, 0, now, reply of each part's take} when every part is taken | {0, i, now, reply
-- of each part up to i} when part i refused (those before it: their decide-only answers, as
-- granted); `now` the server time in ms, which a refused call's next tries pass back
-- @include lock_acquire
-- @include lock_acquire_shared
-- @include sem_take
-- @include limit_gcra
-- @include gate_record
-- @lib instant
-- @lib contention
local takes = {
  ['lock'] = lock_acquire,
  ['shared-lock'] = lock_acquire_shared,
  ['sem'] = sem_take,
  ['rate'] = limit_gcra,
}
-- Where each script's ARGV says "decide only" ('1'), and what it says otherwise.
local decide_only_at = {['lock'] = 10, ['shared-lock'] = 10, ['sem'] = 12, ['rate'] = 7}

-- One instant for every decision and take of this call.
local clock = one_instant()
local instant = clock.call('TIME')
local now = tonumber(instant[1]) * 1000 + math.floor(tonumber(instant[2]) / 1000)

local parts, at, first_key = {}, 2, 1
for i = 1, tonumber(ARGV[1]) do
  local kind, nkeys, nargs = ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  if not takes[kind] then return redis.error_reply('ERR gate_take: unknown part type ' .. kind) end
  local keys, argv = {}, {}
  for k = 1, nkeys do keys[k] = KEYS[first_key + k - 1] end
  for a = 1, nargs do argv[a] = ARGV[at + 2 + a] end
  parts[i] = {kind = kind, keys = keys, argv = argv, first_key = first_key}
  at = at + 3 + nargs
  first_key = first_key + nkeys
end

-- Runs part i's take script; `decide` '1': decide only, '0': for real.
local function run(i, decide)
  local p = parts[i]
  p.argv[decide_only_at[p.kind]] = decide
  -- a wrong type is reported with the index of the key in this script's KEYS
  local function refuse_part(k, what, hint) refuse(p.first_key + k - 1, what, hint) end
  return takes[p.kind](p.keys, p.argv, refuse_part, clock)
end

local since = tonumber(ARGV[at])
local record_key, counters_key = KEYS[first_key], KEYS[first_key + 1]
-- The gate's own keys hold what rcoord keeps there, or nothing: checked before any part is
-- touched, as a script that fails halfway keeps what it wrote.
check_types({'hash', 'hash'}, nil, {record_key, counters_key},
            function(k, what, hint) refuse(first_key + k - 1, what, hint) end)

local answers = {}
local function refused(i)
  contention_busy(counters_key, since)
  local out = {0, i, now}
  for j = 1, i do out[#out + 1] = answers[j] end
  return out
end

-- The parts come in the global order, rates last: a rate is decided once every other part
-- would be held.
for i, p in ipairs(parts) do
  answers[i] = run(i, '1')
  if answers[i][1] ~= 1 then
    -- A lock or a semaphore refuses for real (counted, recorded, enlisted), as alone.
    if p.kind ~= 'rate' then answers[i] = run(i, '0') end
    return refused(i)
  end
end

local out = {1, 0, now}
for i = 1, #parts do
  local taken = run(i, '0')
  if taken[1] ~= 1 then
    return redis.error_reply('ERR gate_take: part ' .. i .. ' refused after it was granted')
  end
  out[#out + 1] = taken
end
local record_argv = {}
for a = at + 1, #ARGV do record_argv[#record_argv + 1] = ARGV[a] end
gate_record({record_key}, record_argv, refuse, clock)
contention_acquired(counters_key, since, now)
return out
