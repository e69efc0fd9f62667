-- wrk script: GETs /player/{uuid} for a player never asked before at every request (a burst of cold
-- lookups, each costing an upstream call if allowed), UUIDs under `-- <prefix>` (8 hex digits, one prefix
-- per owner, so that the upstream's calls tell whose they were), and counts the answers by status: wrk
-- itself only counts the non-2xx ones. At the end it prints one line, `answers {"ok":n,"throttled":n,"other":n}`.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_id", #threads)
end

function init(args)
  prefix = args[1]
  counter = 0
  ok, throttled, other = 0, 0, 0
end

function request()
  counter = counter + 1
  local uuid = prefix .. string.format("%04x%020x", thread_id, counter)
  return wrk.format("GET", "/player/" .. uuid)
end

function response(status, headers, body)
  if status == 200 then
    ok = ok + 1
  elseif status == 429 then
    throttled = throttled + 1
  else
    other = other + 1
  end
end

function done(summary, latency, requests)
  local totals = { ok = 0, throttled = 0, other = 0 }
  for _, thread in ipairs(threads) do
    for name, _ in pairs(totals) do
      totals[name] = totals[name] + thread:get(name)
    end
  end
  io.write(string.format('answers {"ok":%d,"throttled":%d,"other":%d}\n', totals.ok, totals.throttled, totals.other))
end
