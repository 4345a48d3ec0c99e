-- wrk's writers for PostgresOutageTests: each thread, on its one connection, POSTs update_two_bits for its own share of
-- the devices in turn and logs every answer's device index and status to a file of its own, a line at a time.
--   wrk -t N -c N -s update-writers.lua URL -- BODIES N LOG-PREFIX
-- BODIES holds the team JWT on its first line, then one request body per device.
local threads = 0

function setup(thread)
    thread:set("id", threads)
    threads = threads + 1
end

function init(args)
    local lines = io.lines(args[1])
    local headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. lines()}
    local writers = tonumber(args[2])
    mine = {}
    local index = 0
    for body in lines do
        if index % writers == id then
            mine[#mine + 1] = {index = index, request = wrk.format("POST", nil, headers, body)}
        end
        index = index + 1
    end
    log = io.open(args[3] .. id, "w")
    log:setvbuf("line")
    current = 0
end

function request()
    current = current % #mine + 1
    return mine[current].request
end

function response(status)
    log:write(mine[current].index, " ", status, "\n")
end
