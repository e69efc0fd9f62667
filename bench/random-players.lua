-- wrk script: GETs /player/{uuid} for players picked at random among the `count` the service seeded
-- (`-- <prefix> <count>`), the same UUIDs as bench/servers/bench-players.ts makes: a spread of keys over
-- the whole cache, not one hot entry. Each thread draws from a sequence of its own, the same every run.
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

function init(args)
  prefix = args[1]
  count = tonumber(args[2])
  digits = "%0" .. (32 - #prefix) .. "x"
  math.randomseed(7919 * thread_id)
end

function request()
  local uuid = prefix .. string.format(digits, math.random(0, count - 1))
  return wrk.format("GET", "/player/" .. uuid)
end
