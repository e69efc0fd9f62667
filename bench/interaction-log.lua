-- wrk script: POSTs interaction logs, each with an interaction token no other request has (a repeat would
-- be answered from the first record and store nothing). The runner passes a nonce of its own for each wrk
-- run (`-- <nonce>`); each thread has a number, and numbers its requests.
local threads = 0

function setup(thread)
  threads = threads + 1
  thread:set("thread_id", threads)
end

function init(args)
  nonce = args[1] or "no-nonce"
  counter = 0
  -- Beside the headers given on the command line (the bearer token).
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  local user = string.format("%d%06d", 123456789012, counter % 1000)
  local body = string.format(
    '{"interaction":{"interaction_name":"stats","interaction_token":"bench-%s-%d-%d",' ..
    '"interaction_type":"APPLICATION_COMMAND","options":{"player":"Notch","mode":"bedwars"},' ..
    '"server_id":1234567890123456789,"user_id":%s},' ..
    '"server":{"server_id":1234567890123456789,"server_name":"Bench Guild"},' ..
    '"user":{"user_id":%s,"username":"bench_user"}}',
    nonce, thread_id, counter, user, user)
  return wrk.format("POST", nil, nil, body)
end
