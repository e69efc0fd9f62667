-- wrk script: POSTs ping samples, 100 per request (their time is the service's now), for 100 players in
-- turn, so that requests land on many day rows as a deployment's would.
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

function init(args)
  counter = 0
  wrk.headers["Content-Type"] = "application/json"
  local samples = {}
  for index = 1, 100 do
    samples[index] = string.format('{"ping":%d,"lobby":"bedwars_lobby_%d"}', 20 + (index * 7) % 180, index % 12)
  end
  body = '{"samples":[' .. table.concat(samples, ",") .. ']}'
end

function request()
  counter = counter + 1
  local player = string.format("%030d%02d", thread_id, counter % 100)
  return wrk.format("POST", string.gsub(wrk.path, "PLAYER", player), nil, body)
end
