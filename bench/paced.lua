-- wrk script: a client that pauses between its requests (the first argument, ms; 20 unless given), as a bot
-- serving its users does, instead of sending its next request the moment an answer comes.
local pause = 20

function init(args)
  pause = tonumber(args[1]) or pause
end

function delay()
  return pause
end
