-- Argo CD health check for ray.io/v1 RayJob (KubeRay v1.5.0 status).
-- A RayJob is one training run: Healthy once it succeeded, Degraded when it
-- failed, Progressing while KubeRay creates the cluster or the job runs,
-- Suspended while Kueue holds it or its spec stops it.
-- >>> shared: the same in rayjob-health.lua and raycluster-health.lua (tests/gitops holds them equal)
-- Argo CD hands the script the live object as stored (any JSON a client
-- wrote) and runs it without Lua's standard libraries unless
-- resource.customizations.useOpenLibs is set: no string or math library,
-- only the base and table ones. So every field is read by type (a field of
-- another type counts as absent), a list at most LIST_MAX entries in, and
-- at most CAP bytes of a field's text (text), byte by byte.
local LIST_MAX, CAP, CUT = 64, 512, " [cut]"
local function get(t, k)
  if type(t) == "table" then return t[k] end
  return nil
end
local function str(t, k)
  local v = get(t, k)
  if type(v) == "string" then return v end
  return nil
end
local function tbl(t, k)
  local v = get(t, k)
  if type(v) == "table" then return v end
  return nil
end
-- The first entry of list (a table; one that is no list has none) among
-- the first LIST_MAX whose type is typ.
local function find(list, typ)
  for i = 1, LIST_MAX do
    local e = get(list, i)
    if e == nil then return nil end
    if get(e, "type") == typ then return e end
  end
  return nil
end
-- The 256 one-byte strings, in byte order.
local BYTE = {
  [0] = "\0", "\1", "\2", "\3", "\4", "\5", "\6", "\7", "\8", "\9", "\10", "\11", "\12", "\13",
  "\14", "\15", "\16", "\17", "\18", "\19", "\20", "\21", "\22", "\23", "\24", "\25", "\26", "\27",
  "\28", "\29", "\30", "\31", "\32", "\33", "\34", "\35", "\36", "\37", "\38", "\39", "\40", "\41",
  "\42", "\43", "\44", "\45", "\46", "\47", "\48", "\49", "\50", "\51", "\52", "\53", "\54", "\55",
  "\56", "\57", "\58", "\59", "\60", "\61", "\62", "\63", "\64", "\65", "\66", "\67", "\68", "\69",
  "\70", "\71", "\72", "\73", "\74", "\75", "\76", "\77", "\78", "\79", "\80", "\81", "\82", "\83",
  "\84", "\85", "\86", "\87", "\88", "\89", "\90", "\91", "\92", "\93", "\94", "\95", "\96", "\97",
  "\98", "\99", "\100", "\101", "\102", "\103", "\104", "\105", "\106", "\107", "\108", "\109",
  "\110", "\111", "\112", "\113", "\114", "\115", "\116", "\117", "\118", "\119", "\120", "\121",
  "\122", "\123", "\124", "\125", "\126", "\127", "\128", "\129", "\130", "\131", "\132", "\133",
  "\134", "\135", "\136", "\137", "\138", "\139", "\140", "\141", "\142", "\143", "\144", "\145",
  "\146", "\147", "\148", "\149", "\150", "\151", "\152", "\153", "\154", "\155", "\156", "\157",
  "\158", "\159", "\160", "\161", "\162", "\163", "\164", "\165", "\166", "\167", "\168", "\169",
  "\170", "\171", "\172", "\173", "\174", "\175", "\176", "\177", "\178", "\179", "\180", "\181",
  "\182", "\183", "\184", "\185", "\186", "\187", "\188", "\189", "\190", "\191", "\192", "\193",
  "\194", "\195", "\196", "\197", "\198", "\199", "\200", "\201", "\202", "\203", "\204", "\205",
  "\206", "\207", "\208", "\209", "\210", "\211", "\212", "\213", "\214", "\215", "\216", "\217",
  "\218", "\219", "\220", "\221", "\222", "\223", "\224", "\225", "\226", "\227", "\228", "\229",
  "\230", "\231", "\232", "\233", "\234", "\235", "\236", "\237", "\238", "\239", "\240", "\241",
  "\242", "\243", "\244", "\245", "\246", "\247", "\248", "\249", "\250", "\251", "\252", "\253",
  "\254", "\255"
}
-- text reads at most max bytes of s into characters (UTF-8 sequences kept
-- whole) of at most max bytes in all, and says whether s had more. Each
-- run of control characters (C0, DEL, C1) becomes one separator, ": " when
-- it holds a line break, else " ", and none at either end; a run longer
-- than RUN_MAX ends the text. Without the string library (useOpenLibs
-- unset) the byte at position i is the largest b for which s's first i-1
-- bytes followed by b sort at or before s: eight comparisons of i bytes.
local RUN_MAX, BITS = 32, {128, 64, 32, 16, 8, 4, 2, 1}
local sbyte = type(string) == "table" and string.byte or nil
local function bytes(s)
  local i, read = 0, ""
  if sbyte ~= nil then
    return function()
      i = i + 1
      return sbyte(s, i)
    end
  end
  return function()
    local b = 0
    for j = 1, 8 do
      local c = b + BITS[j]
      if read .. BYTE[c] <= s then b = c end
    end
    read = read .. BYTE[b]
    return b
  end
end
local function text(s, max)
  local chars, len, more = {}, 0, false
  local n = #s
  if n > max then n, more = max, true end
  local nextByte, sep, run, seq, need = bytes(s), nil, 0, nil, 0
  local function put(c)
    if c >= "\194\128" and c <= "\194\159" then
      if sep == nil then sep = " " end
      return true
    end
    local lead = sep
    if len == 0 then lead = nil end
    local size = #c
    if lead ~= nil then size = size + #lead end
    if len + size > max then
      more = true
      return false
    end
    if lead ~= nil then chars[#chars + 1] = lead end
    chars[#chars + 1] = c
    len, sep, run = len + size, nil, 0
    return true
  end
  for _ = 1, n do
    local b = nextByte()
    if need > 0 and b >= 128 and b < 192 then
      seq, need = seq .. BYTE[b], need - 1
      if need == 0 and not put(seq) then break end
    else
      if need > 0 then
        -- a sequence cut short: its bytes as they are (JSON shows U+FFFD)
        need = 0
        if not put(seq) then break end
      end
      if b < 32 or b == 127 then
        if b == 10 or b == 13 then sep = ": " elseif sep == nil then sep = " " end
        run = run + 1
        if run > RUN_MAX then
          more = true
          break
        end
      elseif b >= 192 and b < 248 then
        seq, need = BYTE[b], 1
        if b >= 224 then need = 2 end
        if b >= 240 then need = 3 end
      elseif not put(BYTE[b]) then
        break
      end
    end
  end
  if need > 0 and not more then put(seq) end
  return chars, more
end
-- message joins parts into one line of at most CAP bytes, ending in CUT
-- when cut: a string part is the script's own words, a table part {v} a
-- field's value v, shown only when it is a string and always as text.
local function message(parts)
  local out, len, cut = {}, 0, false
  local room = CAP - #CUT
  for i = 1, #parts do
    local p = parts[i]
    if type(p) == "string" then
      if len + #p > room then
        cut = true
        break
      end
      out[#out + 1], len = p, len + #p
    elseif type(p[1]) == "string" then
      local chars, more = text(p[1], room - len)
      for j = 1, #chars do
        out[#out + 1], len = chars[j], len + #chars[j]
      end
      if more then
        cut = true
        break
      end
    end
  end
  local m = table.concat(out)
  if cut then m = m .. CUT end
  return m
end
-- A run's state from its spec, never from the nemo-rl.nvidia.com/state
-- annotation (any profile can write it), as fn/core/runparams
-- StateFromSpec: stopped when suspended and no Kueue LocalQueue admits it;
-- suspended with the queue label means queued (Kueue owns spec.suspend).
-- The annotation only words the message of a run its spec stops.
local meta = tbl(obj, "metadata")
local queue = str(tbl(meta, "labels"), "kueue.x-k8s.io/queue-name")
if queue == "" then queue = nil end
local suspended = get(tbl(obj, "spec"), "suspend") == true
local stopped = suspended and queue == nil
local stoppedInGit = stopped and str(tbl(meta, "annotations"), "nemo-rl.nvidia.com/state") == "stopped"
local status = tbl(obj, "status")
local function health(st, parts)
  return {status = st, message = message(parts)}
end
local function queued()
  return health("Suspended", {"queued by Kueue in LocalQueue ", {queue}, ": waiting for quota (Kueue unsuspends it when admitted; never edit spec.suspend)"})
end
-- <<< shared
local st = str(status, "jobDeploymentStatus") or ""
-- KubeRay walks a RayJob created suspended through New, Initializing and
-- Suspending to Suspended; with Kueue's label every one of those is
-- "queued" (Kueue owns spec.suspend), only the end states are not.
local ended = st == "Complete" or st == "Failed" or st == "ValidationFailed"
if suspended and queue ~= nil and not ended then return queued() end
-- A run Git declares stopped (nrl-k8s state: stopped) is rendered suspended:
-- KubeRay deletes its cluster and keeps the RayJob as the run's record.
if stoppedInGit and not ended then
  if st == "Suspending" then
    return health("Progressing", {"stopping (state: stopped in Git): KubeRay is deleting the run's cluster"})
  end
  return health("Suspended", {"stopped (state: stopped in Git): no cluster runs; set state: run to start it again (it resumes from its checkpoints, if the recipe does)"})
end
if st == "" then
  return health("Progressing", {"waiting for KubeRay to pick up the RayJob"})
end
local job = str(status, "jobStatus") or ""
local parts = {{st}}
if job ~= "" then parts[#parts + 1] = ", job "; parts[#parts + 1] = {job} end
for _, k in ipairs({"reason", "message"}) do
  local v = str(status, k)
  if v ~= nil and v ~= "" then parts[#parts + 1] = ": "; parts[#parts + 1] = {v} end
end
-- While Initializing, KubeRay copies nothing of the RayCluster into the
-- RayJob: name the cluster, whose own health check reports pods it could
-- not create (ReplicaFailure, e.g. refused by Pod Security admission).
local cluster = str(status, "rayClusterName")
if st == "Initializing" and cluster ~= nil and cluster ~= "" then
  parts[#parts + 1] = ": waiting for RayCluster "
  parts[#parts + 1] = {cluster}
  parts[#parts + 1] = " to be ready"
end
if st == "Complete" and job == "SUCCEEDED" then return health("Healthy", parts) end
if st == "Complete" or st == "Failed" or st == "ValidationFailed" then return health("Degraded", parts) end
if st == "Suspended" then
  if queue ~= nil then return queued() end
  return health("Suspended", parts)
end
-- Initializing, Running, Waiting, Retrying, Suspending, or a status this
-- check does not know
return health("Progressing", parts)
