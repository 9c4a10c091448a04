-- Argo CD health check for ray.io/v1 RayJob (KubeRay v1.5.0 status).
-- A RayJob is one training run: Healthy once it succeeded, Degraded when it
-- failed, Progressing while KubeRay creates the cluster or the job runs,
-- Suspended while Kueue holds it or Git declares it stopped.
hs = {}
-- A run Kueue admits carries its LocalQueue's label; while suspended it is
-- waiting for quota (Kueue owns spec.suspend), which is the message to show.
local queue = nil
if obj.metadata ~= nil and obj.metadata.labels ~= nil then
  queue = obj.metadata.labels["kueue.x-k8s.io/queue-name"]
end
local function queued()
  hs.status = "Suspended"
  hs.message = "queued by Kueue in LocalQueue " .. queue .. ": waiting for quota (Kueue unsuspends it when admitted; never edit spec.suspend)"
  return hs
end
local st = ""
if obj.status ~= nil and obj.status.jobDeploymentStatus ~= nil then st = obj.status.jobDeploymentStatus end
-- KubeRay walks a RayJob created suspended through New, Initializing and
-- Suspending to Suspended; with Kueue's label every one of those is
-- "queued" (Kueue owns spec.suspend), only the end states are not.
local ended = st == "Complete" or st == "Failed" or st == "ValidationFailed"
-- A run Git declares stopped (nrl-k8s state: stopped) is rendered suspended:
-- KubeRay deletes its cluster and keeps the RayJob as the run's record.
local stopped = obj.metadata ~= nil and obj.metadata.annotations ~= nil and obj.metadata.annotations["nemo-rl.nvidia.com/state"] == "stopped"
if stopped and not ended then
  if st == "Suspending" then
    hs.status = "Progressing"
    hs.message = "stopping (state: stopped in Git): KubeRay is deleting the run's cluster"
  else
    hs.status = "Suspended"
    hs.message = "stopped (state: stopped in Git): no cluster runs; set state: run to start it again (it resumes from its checkpoints, if the recipe does)"
  end
  return hs
end
if queue ~= nil and obj.spec ~= nil and obj.spec.suspend == true and not ended then return queued() end
if st == "" then
  hs.status = "Progressing"
  hs.message = "waiting for KubeRay to pick up the RayJob"
  return hs
end
local job = obj.status.jobStatus or ""
local msg = st
if job ~= "" then msg = msg .. ", job " .. job end
if obj.status.reason ~= nil and obj.status.reason ~= "" then msg = msg .. ": " .. obj.status.reason end
if obj.status.message ~= nil and obj.status.message ~= "" then msg = msg .. ": " .. obj.status.message end
-- While Initializing, KubeRay copies nothing of the RayCluster into the
-- RayJob: name the cluster, whose own health check reports pods it could
-- not create (ReplicaFailure, e.g. refused by Pod Security admission).
if st == "Initializing" and obj.status.rayClusterName ~= nil and obj.status.rayClusterName ~= "" then
  msg = msg .. ": waiting for RayCluster " .. obj.status.rayClusterName .. " to be ready"
end
hs.message = msg
if st == "Complete" then
  if job == "SUCCEEDED" then
    hs.status = "Healthy"
  else
    hs.status = "Degraded"
  end
elseif st == "Failed" or st == "ValidationFailed" then
  hs.status = "Degraded"
elseif st == "Suspended" then
  if queue ~= nil then return queued() end
  hs.status = "Suspended"
else
  -- Initializing, Running, Waiting, Retrying, Suspending
  hs.status = "Progressing"
end
return hs
