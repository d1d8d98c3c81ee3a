-- wrk script for bench/serve_vs_nginx.sh: send DEPTH GET requests back to back on each
-- connection (HTTP/1.1 pipelining), so the server, not wrk, does most of the work.
local depth = tonumber(os.getenv("DEPTH") or "16")
local batch

function init(args)
  local one = wrk.format("GET", "/")
  batch = string.rep(one, depth)
end

function request()
  return batch
end
