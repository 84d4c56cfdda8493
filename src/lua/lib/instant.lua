-- instant: a stand-in for `redis` whose TIME always answers the one instant it read first (spliced
-- in by cmake/EmbedLua.cmake), for a script that runs several others' logic (-- @include) and
-- wants every one of them to decide at the same moment, so that their decisions agree.
local function one_instant()
  local now = redis.call('TIME')
  local server = redis
  return setmetatable({
    call = function(command, ...)
      if command == 'TIME' then return now end
      return server.call(command, ...)
    end,
  }, {__index = server})
end
