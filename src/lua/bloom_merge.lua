-- bloom_merge: OR the bits of a gathered group of items into a layer's bitmap (a large bloom
-- add on a one-layer filter). The client sends it inside MULTI, after GET of the layer (so it
-- knows the bits as they were, and answers each item as BITFIELD would have) and SET of the
-- group's bits to a scratch key: the bitmaps never pass through Lua, and the scratch key
-- exists only inside the transaction.
-- KEYS[1] the layer's bitmap, KEYS[2] the scratch key with the group's bits, KEYS[3] the
-- filter's metadata hash (same {hash tag})
-- returns 1 merged, -2 no such filter (nothing changed: a layer without its metadata must not
-- come back); an error reply when BITOP is refused (the client then sends BITFIELD)
local function drop_scratch() redis.call('DEL', KEYS[2]) end
local meta = redis.call('TYPE', KEYS[3])['ok']
if meta ~= 'hash' then
  drop_scratch()
  return -2
end
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind ~= 'string' and kind ~= 'none' then
  drop_scratch()
  refuse(1, 'a ' .. kind .. ', not the string rcoord keeps there')
end
local merged = redis.pcall('BITOP', 'OR', KEYS[1], KEYS[1], KEYS[2])
drop_scratch()
if type(merged) == 'table' and merged.err then return merged end
-- BITOP writes a new value, without the expiry the layer had: it takes the filter's again.
expire_object(0)
return 1
