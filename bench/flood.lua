-- wrk script: one owner flooding the costliest routes in turn: a ping history of every day seeded, a 1 MiB
-- body of ~90,000 unknown keys, and a batch of 1000 ping samples (all to /ping/<the player> of the URL).
-- Counts the answers by status, printed at the end as "status <code> <count>" lines.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local function headersWith(extra)
  local headers = {}
  for name, value in pairs(wrk.headers) do headers[name] = value end
  for name, value in pairs(extra) do headers[name] = value end
  return headers
end

function init(args)
  statuses = {}
  counter = 0
  local keys = {}
  for index = 1, 90000 do keys[index] = string.format('"k%d":0', index) end
  unknownKeys = '{' .. table.concat(keys, ',') .. '}'
  local samples = {}
  for index = 1, 1000 do
    samples[index] = string.format('{"ping":%d,"lobby":"lobby_%d"}', 20 + (index * 7) % 180, index % 12)
  end
  batch = '{"samples":[' .. table.concat(samples, ',') .. ']}'
  json = { ["Content-Type"] = "application/json" }
end

function request()
  counter = counter + 1
  local turn = counter % 3
  if turn == 0 then return wrk.format("GET", wrk.path, headersWith({}), nil) end
  if turn == 1 then return wrk.format("POST", wrk.path, headersWith(json), unknownKeys) end
  return wrk.format("POST", wrk.path, headersWith(json), batch)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do total[status] = (total[status] or 0) + count end
  end
  for status, count in pairs(total) do io.write(string.format("status %d %d\n", status, count)) end
end
