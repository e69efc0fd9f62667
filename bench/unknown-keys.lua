-- wrk script: POSTs a 1 MiB JSON body of 90,000 unknown keys, which the service must refuse cheaply.
function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  local keys = {}
  for index = 1, 90000 do keys[index] = string.format('"k%d":0', index) end
  wrk.body = '{' .. table.concat(keys, ',') .. '}'
end
