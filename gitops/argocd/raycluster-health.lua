-- Argo CD health check for ray.io/v1 RayCluster (KubeRay v1.5.0 status).
-- Healthy when KubeRay reports the cluster ready (every pod up once:
-- condition RayClusterProvisioned, or the older state field), Suspended when
-- suspended, Degraded on a replica failure or state failed, else Progressing.
hs = {}
local function cond(t)
  if obj.status == nil or obj.status.conditions == nil then return nil end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == t then return c end
  end
  return nil
end
-- A RayCluster Kueue admits (raycluster mode) carries its LocalQueue's
-- label; while suspended it is waiting for quota.
local queue = nil
if obj.metadata ~= nil and obj.metadata.labels ~= nil then
  queue = obj.metadata.labels["kueue.x-k8s.io/queue-name"]
end
local function queued()
  hs.status = "Suspended"
  hs.message = "queued by Kueue in LocalQueue " .. queue .. ": waiting for quota (Kueue unsuspends it when admitted; never edit spec.suspend)"
  return hs
end
local stopped = obj.metadata ~= nil and obj.metadata.annotations ~= nil and obj.metadata.annotations["nemo-rl.nvidia.com/state"] == "stopped"
if stopped then
  -- Git declares the run stopped (nrl-k8s state: stopped): rendered
  -- suspended, KubeRay deletes its Pods.
  local suspending = cond("RayClusterSuspending")
  if suspending ~= nil and suspending.status == "True" then
    hs.status = "Progressing"
    hs.message = "stopping (state: stopped in Git): KubeRay is deleting the cluster's Pods"
    return hs
  end
  hs.status = "Suspended"
  hs.message = "stopped (state: stopped in Git): no Pods run; set state: run to start it again"
  return hs
end
if obj.status == nil then
  if queue ~= nil and obj.spec ~= nil and obj.spec.suspend == true then return queued() end
  hs.status = "Progressing"
  hs.message = "waiting for KubeRay to pick up the RayCluster"
  return hs
end
local failure = cond("ReplicaFailure")
if failure ~= nil and failure.status == "True" then
  hs.status = "Degraded"
  -- KubeRay's message is the reconcile error: errors.Join of the reason
  -- and the API server's refusal, one a line ("FailedCreateWorkerPod\n
  -- pods ... is forbidden: ..."). One line, the reason once.
  local reason = failure.reason or ""
  local m = string.gsub(failure.message or "", "\n", ": ")
  if reason ~= "" and string.sub(m, 1, string.len(reason)) ~= reason then
    m = reason .. ": " .. m
  end
  hs.message = m
  return hs
end
if obj.status.state == "failed" then
  hs.status = "Degraded"
  hs.message = obj.status.reason or "state failed"
  return hs
end
local suspended = cond("RayClusterSuspended")
if obj.status.state == "suspended" or (suspended ~= nil and suspended.status == "True") then
  if queue ~= nil then return queued() end
  hs.status = "Suspended"
  hs.message = "suspended"
  return hs
end
local provisioned = cond("RayClusterProvisioned")
if obj.status.state == "ready" or (provisioned ~= nil and provisioned.status == "True") then
  hs.status = "Healthy"
  hs.message = "ready"
  return hs
end
hs.status = "Progressing"
hs.message = "pods starting"
return hs
