-- wrk script: POSTs /players naming the `count` players the service seeded (`-- <prefix> <count>`), the same
-- UUIDs as bench/servers/bench-players.ts makes, every request the same body: a bulk read of cached players.
function init(args)
  local prefix = args[1]
  local count = tonumber(args[2])
  local digits = "%0" .. (32 - #prefix) .. "x"
  local players = {}
  for index = 0, count - 1 do
    players[#players + 1] = '"' .. prefix .. string.format(digits, index) .. '"'
  end
  wrk.method = "POST"
  wrk.body = '{"players":[' .. table.concat(players, ",") .. ']}'
  -- Beside the headers given on the command line (the bearer token).
  wrk.headers["Content-Type"] = "application/json"
end
