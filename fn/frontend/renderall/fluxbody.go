package renderall

// kustomizationBody is a run's Flux Kustomization after its header
// (FluxKustomization fills the {{...}} fields): every setting of it, and
// why, in one place.
const kustomizationBody = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {{run}}
  namespace: {{namespace}}
spec:
  interval: {{interval}}
  sourceRef: {kind: GitRepository, name: {{source}}}
  path: {{path}}
  # What the run's render no longer holds is deleted: a stopped Kueue
  # run's RayJob (which stops it and frees its quota), or, once the run
  # is state: removed and its folder lists nothing, every object of it.
  prune: true
  # Deleting this Kustomization (its file removed from Git, kubectl, Flux
  # uninstalled) leaves the run's objects: a run is stopped or removed by
  # a commit to its run file (state: stopped, state: removed), never as a
  # side effect; render-all --check refuses deleting a run not removed.
  deletionPolicy: Orphan
  # Never delete and re-create an object whose apply is refused (a started
  # RayJob re-created is a new run from step 0).
  force: false
  # Apply and prune never wait for the run; the health checks below run
  # after them and decide the Kustomization's Ready condition only.
  wait: false
  timeout: 2m
{{healthChecks}}  # kstatus has no rule for KubeRay's kinds (it would call any RayJob
  # Current): what gitops/argocd/*.lua say, in Flux's three states.
  # Stopped is spec.suspend without Kueue's queue label (a Kueue run owns
  # spec.suspend: suspended means queued).
  healthCheckExprs:
  # Every field is read through a type guard (type(x) == map, .?field
  # .orValue): a field of another JSON type than KubeRay writes counts as
  # absent, so no stored object makes an expression fail to evaluate
  # (tests/hostile, TestFluxHealthGenerated).
  - apiVersion: ray.io/v1
    kind: RayJob
    inProgress: >-
      (type(metadata) == map && has(metadata.labels) && type(metadata.labels) == map && 'kueue.x-k8s.io/queue-name' in metadata.labels && type(metadata.labels['kueue.x-k8s.io/queue-name']) == string && metadata.labels['kueue.x-k8s.io/queue-name'] != '')
      && (type(spec) == map && spec.?suspend.orValue(false) == true)
      && !((type(status) == map ? status.?jobDeploymentStatus.orValue('') : '') in ['Complete', 'Failed', 'ValidationFailed'])
    failed: >-
      (type(status) == map ? status.?jobDeploymentStatus.orValue('') : '') in ['Failed', 'ValidationFailed']
      || ((type(status) == map ? status.?jobDeploymentStatus.orValue('') : '') == 'Complete' && (type(status) == map ? status.?jobStatus.orValue('') : '') != 'SUCCEEDED')
    current: >-
      ((type(status) == map ? status.?jobDeploymentStatus.orValue('') : '') == 'Complete' && (type(status) == map ? status.?jobStatus.orValue('') : '') == 'SUCCEEDED')
      || ((type(status) == map ? status.?jobDeploymentStatus.orValue('') : '') == 'Suspended' && (type(spec) == map && spec.?suspend.orValue(false) == true) && !(type(metadata) == map && has(metadata.labels) && type(metadata.labels) == map && 'kueue.x-k8s.io/queue-name' in metadata.labels && type(metadata.labels['kueue.x-k8s.io/queue-name']) == string && metadata.labels['kueue.x-k8s.io/queue-name'] != ''))
  - apiVersion: ray.io/v1
    kind: RayCluster
    inProgress: >-
      (type(metadata) == map && has(metadata.labels) && type(metadata.labels) == map && 'kueue.x-k8s.io/queue-name' in metadata.labels && type(metadata.labels['kueue.x-k8s.io/queue-name']) == string && metadata.labels['kueue.x-k8s.io/queue-name'] != '')
      && (type(spec) == map && spec.?suspend.orValue(false) == true)
    failed: >-
      (type(status) == map && has(status.conditions) && type(status.conditions) == list && status.conditions.exists(c, type(c) == map && c.?type.orValue('') == 'ReplicaFailure' && c.?status.orValue('') == 'True'))
      || (type(status) == map ? status.?state.orValue('') : '') == 'failed'
    current: >-
      ((type(spec) == map && spec.?suspend.orValue(false) == true) && !(type(metadata) == map && has(metadata.labels) && type(metadata.labels) == map && 'kueue.x-k8s.io/queue-name' in metadata.labels && type(metadata.labels['kueue.x-k8s.io/queue-name']) == string && metadata.labels['kueue.x-k8s.io/queue-name'] != '')
      && ((type(status) == map ? status.?state.orValue('') : '') == 'suspended' || (type(status) == map && has(status.conditions) && type(status.conditions) == list && status.conditions.exists(c, type(c) == map && c.?type.orValue('') == 'RayClusterSuspended' && c.?status.orValue('') == 'True'))))
      || (!(type(spec) == map && spec.?suspend.orValue(false) == true)
      && ((type(status) == map ? status.?state.orValue('') : '') == 'ready' || (type(status) == map && has(status.conditions) && type(status.conditions) == list && status.conditions.exists(c, type(c) == map && c.?type.orValue('') == 'RayClusterProvisioned' && c.?status.orValue('') == 'True'))))
`
