-- limit_multi: one decision over several rates of one limit (`--rate 10/s --rate 1000/h`):
-- allowed only when every rate allows, and then it consumes from every rate; a denial
-- consumes from none. Each rate keeps its own state, decided by the single-rate script of the
-- algorithm, run here as a function: first as a peek for every rate (nothing written; a key
-- of the wrong type is refused before any write), then, only if all allow, for real. The
-- server's TIME is read once, so both passes decide at the same instant and agree.
-- KEYS: per rate, its state hash and its log (same hash tag), in the order of ARGV's rates.
-- ARGV[1] algo, ARGV[2] cost, ARGV[3] peek ('1': change nothing), ARGV[4] member (the log
-- entry of a sliding-window request), then per rate: unit, drain, burst, window_us.
-- returns {allowed (1 when every rate allows), then per rate the 9 fields of the single-rate
--          scripts: allowed, limit, remaining, retry_after_us (-1: never), reset_after_us,
--          wait_us (0), now_us, due_us, slot}
-- @include limit_gcra
-- @include limit_token_bucket
-- @include limit_sliding_window
-- @include limit_fixed_window
-- @lib instant
local decide = ({
  ['gcra'] = limit_gcra,
  ['token-bucket'] = limit_token_bucket,
  ['sliding-window'] = limit_sliding_window,
  ['fixed-window'] = limit_fixed_window,
})[ARGV[1]]
if not decide then return redis.error_reply('ERR limit_multi: unknown algo ' .. ARGV[1]) end
local cost, peek, member = ARGV[2], ARGV[3] == '1', ARGV[4]
local n = (#ARGV - 4) / 4

-- One instant for every decision of this call.
local clock = one_instant()

local function decide_rate(i, write)
  local base = 4 + (i - 1) * 4
  local keys = {KEYS[2 * i - 1], KEYS[2 * i]}
  local argv = {ARGV[base + 1], ARGV[base + 2], ARGV[base + 3], cost, ARGV[base + 4], '-1',
    write and '0' or '1', member}
  -- a wrong type is reported with the index of the key in this script's KEYS
  local function refuse_rate(k, what, hint) refuse(2 * (i - 1) + k, what, hint) end
  return decide(keys, argv, refuse_rate, clock)
end

local results, all = {}, true
for i = 1, n do
  results[i] = decide_rate(i, false)
  if results[i][1] ~= 1 then all = false end
end
if all and not peek then
  for i = 1, n do results[i] = decide_rate(i, true) end
end
local out = {all and 1 or 0}
for i = 1, n do
  for j = 1, 9 do out[#out + 1] = results[i][j] end
end
return out
