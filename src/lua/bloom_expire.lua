-- bloom_expire: give every key of a Bloom filter, its metadata and each layer, an expiry
-- (bloom add --expire, after the items are in).
-- KEYS[1] metadata hash, KEYS[2..] the bitmaps of layers 0, 1, ... as the caller knows them
-- (same {hash tag}); ARGV[1] expiry in ms
-- returns the filter's layer count: the expiry was set when it is #KEYS - 1; another count
-- changes nothing (re-read the metadata and call again); 0 when there is no such filter
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then return 0 end
if kind ~= 'hash' or redis.call('HEXISTS', KEYS[1], 'layers') == 0 then
  refuse(1, 'a ' .. kind .. ' that is not an rcoord bloom filter')
end
local layers = tonumber(redis.call('HGET', KEYS[1], 'layers'))
if layers ~= #KEYS - 1 then return layers end
expire_object(tonumber(ARGV[1]))
return layers
