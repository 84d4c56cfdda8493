-- @no-writes
-- complete_suggest: the terms whose folded form starts with a folded prefix.
-- KEYS[1] index (members `folded \0 term`, score 0), KEYS[2] scores (same {hash tag})
-- ARGV[1] folded prefix, ARGV[2] limit, ARGV[3] the exclusive upper end of the members with
-- that prefix, as ZRANGE BYLEX takes it: '(' and the smallest string above them all, or '+'
-- (computed by the caller: a term may hold any byte, 0xFF too)
-- returns {scored, member1, score1, member2, score2, ...}: without scores (scored 0) in
-- lexicographic order of the members; with scores (scored 1) highest first, ties in
-- lexicographic order. Costs O(log n + limit) without scores and O(log n + matches) with.
check_types({'zset', 'zset'}, 'autocomplete index')
local limit = tonumber(ARGV[2])
local high = ARGV[3]
local out = {0}
if redis.call('EXISTS', KEYS[2]) == 0 then
  local members = redis.call('ZRANGE', KEYS[1], '[' .. ARGV[1], high, 'BYLEX', 'LIMIT', 0, limit)
  for _, m in ipairs(members) do
    out[#out + 1] = m
    out[#out + 1] = '0'
  end
  return out
end
out[1] = 1
-- Every match with its score; the match's rank in byte order breaks ties, so no string
-- comparison happens in Lua (whose string order follows the server's locale).
local matches = {}
local low = '[' .. ARGV[1]
while true do
  local chunk = redis.call('ZRANGE', KEYS[1], low, high, 'BYLEX', 'LIMIT', 0, 1000)
  for _, m in ipairs(chunk) do
    local s = redis.call('ZSCORE', KEYS[2], m) or '0'
    matches[#matches + 1] = {m, tonumber(s), #matches, s}
  end
  if #chunk < 1000 then break end
  low = '(' .. chunk[#chunk]
end
table.sort(matches, function(a, b)
  if a[2] ~= b[2] then return a[2] > b[2] end
  return a[3] < b[3]
end)
for i = 1, math.min(limit, #matches) do
  out[#out + 1] = matches[i][1]
  out[#out + 1] = matches[i][4]
end
return out
