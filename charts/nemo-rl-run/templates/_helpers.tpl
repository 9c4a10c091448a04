{{/*
This chart holds no rendering rule. files/rendered/*.json is the Go
engine's output (nrl-k8s chart-data) for each packaged profile, rendered
with sentinel run parameters; these helpers only check values and replace
the sentinels with them. doc-NN.yaml then writes document NN with toYaml,
the same sigs.k8s.io/yaml.Marshal nrl-k8s ends with, so `helm template`
equals `nrl-k8s render` byte for byte (docs/architecture.md).
*/}}

{{/*
nemo-rl-run.docs: the rendered documents as a JSON array, with the run's
values in place of the sentinels; "" when a required value is missing
(helm lint renders with the empty defaults, where `fail` only logs).
*/}}
{{- define "nemo-rl-run.docs" -}}
{{- $meta := .Files.Get "files/profiles.json" | fromJson -}}
{{- $s := $meta.sentinels -}}
{{- $v := .Values -}}
{{- $_ := required (printf "nemo-rl-run: the profile value is required (one of: %s)" (keys $meta.profiles | sortAlpha | join ", ")) $v.profile -}}
{{- $_ := required "nemo-rl-run: the user value is required (--set user=<you>, as nrl-k8s --user)" $v.user -}}
{{- if and $v.profile $v.user -}}
{{- $p := index $meta.profiles $v.profile -}}
{{- if not $p -}}
{{- fail (printf "nemo-rl-run: profile %q is not packaged in this chart; expected one of: %s (a profile of your own needs nrl-k8s render, the KRM function, or a chart of your own: nrl-k8s chart-new)" $v.profile (keys $meta.profiles | sortAlpha | join ", ")) -}}
{{- end -}}
{{- $mode := $v.mode | default "rayjob" -}}
{{- $state := $v.state | default "run" -}}
{{- if not (has $state $meta.state.states) -}}
{{- fail (printf "nemo-rl-run: state %q: expected one of %s (stopped: the run rendered so that nothing starts it, as nrl-k8s render --state stopped)" (toString $state) (join ", " $meta.state.states)) -}}
{{- end -}}
{{- if and (eq $mode "services") (not (has $mode $p.modes)) -}}
{{- fail (printf "nemo-rl-run: mode services: profile %s declares no deployments, so there are no shared services to install; its runs need no services release" $v.profile) -}}
{{- end -}}
{{- if hasKey ($p.modesRefused | default dict) $mode -}}
{{- fail (printf "nemo-rl-run: mode %q: profile %s cannot be rendered in it: %s; expected one of %s" $mode $v.profile (index $p.modesRefused $mode) (join ", " $p.modes)) -}}
{{- end -}}
{{- if not (has $mode $p.modes) -}}
{{- fail (printf "nemo-rl-run: mode %q: expected one of %s" $mode (join ", " $p.modes)) -}}
{{- end -}}
{{- if $v.deployments -}}
{{- fail (printf "nemo-rl-run: deployments=true: a run release does not install the profile's shared services%s: two releases would both claim them, and helm uninstall of one would delete what the other still uses. Install them once per user and namespace as a release of their own (helm install %s CHART --set mode=services,profile=%s,user=%s) and leave deployments unset on every run" (ternary (printf " (%s)" (include "nemo-rl-run.serviceNames" (list $p $v.user $s.user))) "" (has "services" $p.modes)) (include "nemo-rl-run.servicesRelease" (list $p $v.user $s.user)) $v.profile $v.user) -}}
{{- end -}}
{{- if eq $mode "services" -}}
{{- range $name, $val := dict "runId" $v.runId "overrides" $v.overrides -}}
{{- if $val -}}
{{- fail (printf "nemo-rl-run: %s: mode services installs the profile's shared services, not a run, so it takes no %s; expected it unset (set it on the run releases)" $name $name) -}}
{{- end -}}
{{- end -}}
{{- if ($v.test | default dict).enabled -}}
{{- fail "nemo-rl-run: test.enabled: mode services installs the shared services, not a run, and the helm test suite runs nrl-k8s status, which reports on a run; expected test.enabled unset (enable it on the run releases)" -}}
{{- end -}}
{{- if and $v.image (not (contains $s.image (.Files.Get (index $p.renders "services").file))) -}}
{{- fail (printf "nemo-rl-run: image: profile %s's shared services run more than one image, so one image value cannot replace them; expected image unset (their images are the profile's)" $v.profile) -}}
{{- end -}}
{{- end -}}
{{- $ns := $v.namespace | default .Release.Namespace -}}
{{- with $meta.namespaces -}}
{{- if not (and (has $.Release.Namespace .) (has $ns .)) -}}
{{- fail (printf "nemo-rl-run: release namespace %q%s: this chart is bound to the namespace(s) %s (chart-new --namespaces, or the index's namespaces:); expected helm install -n one of them%s" $.Release.Namespace (ternary (printf ", namespace value %q" $ns) "" (ne $ns $.Release.Namespace)) (join ", " .) (ternary " and no namespace value naming another" "" (ne $ns $.Release.Namespace))) -}}
{{- end -}}
{{- end -}}
{{- $runId := $v.runId | default "" -}}
{{- $reserved := list $s.user $s.runId $s.namespace $s.name $s.image -}}
{{- $labels := merge (include "nemo-rl-run.chartLabels" . | fromJson) ($v.labels | default dict) -}}
{{- $annotations := $v.annotations | default dict -}}
{{- $texts := dict "release name" .Release.Name "user" $v.user "namespace" $ns "runId" $runId "image" ($v.image | default "") -}}
{{- range $k, $val := $labels -}}
{{- $_ := set $texts (printf "labels key %q" $k) $k -}}
{{- $_ := set $texts (printf "labels.%s" $k) (toString $val) -}}
{{- end -}}
{{- range $k, $val := $annotations -}}
{{- $_ := set $texts (printf "annotations key %q" $k) $k -}}
{{- $_ := set $texts (printf "annotations.%s" $k) (toString $val) -}}
{{- end -}}
{{- range $name, $val := $texts -}}
{{- range $r := $reserved -}}
{{- if contains $r (toString $val) -}}
{{- fail (printf "nemo-rl-run: %s %q: values containing %s are reserved (the chart's placeholders)" $name $val (join ", " $reserved)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $name, $val := dict "user" $v.user "namespace" $ns "runId" $runId -}}
{{- if and $val (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" (toString $val))) -}}
{{- fail (printf "nemo-rl-run: %s %q: expected a DNS label (lower case letters, digits and '-', starting and ending with a letter or digit%s)" $name $val (ternary "; nrl-k8s --user lower-cases and turns '_' and '.' into '-'" "" (eq $name "user"))) -}}
{{- end -}}
{{- end -}}
{{- range $i, $o := $v.overrides -}}
{{- if regexMatch "^[+~]*infra([.=]|$)" $o -}}
{{- fail (printf "nemo-rl-run: overrides[%d] %q: infra.* overrides change the profile, and this chart carries its profiles pre-rendered; use nrl-k8s render or the KRM function for them" $i $o) -}}
{{- end -}}
{{- if or (contains $s.user $o) (contains $s.runId $o) (contains $s.namespace $o) (contains $s.name $o) (contains $s.image $o) (contains $s.override $o) -}}
{{- fail (printf "nemo-rl-run: overrides[%d] %q: values containing %q, %q, %q, %q, %q or %q are reserved (the chart's placeholders)" $i $o $s.user $s.runId $s.namespace $s.name $s.image $s.override) -}}
{{- end -}}
{{- end -}}
{{- $key := include "nemo-rl-run.key" . -}}
{{- $recipeText := include "nemo-rl-run.recipeText" . -}}
{{- $r := index $p.renders $key -}}
{{- /* A cluster version that is not semver (a Kubernetes built without its release ldflags reports v0.0.0-master+$Format:%H$) cannot be compared: not checked; the API server refuses kinds it does not serve. */ -}}
{{- if and $r.kubeVersion (regexMatch "^v?[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?([+][0-9A-Za-z.-]+)?$" .Capabilities.KubeVersion.Version) (not (semverCompare $r.kubeVersion .Capabilities.KubeVersion.Version)) -}}
{{- fail (printf "nemo-rl-run: profile %s in %s mode renders API versions Kubernetes %s does not serve; expected a cluster version %s (resource.k8s.io/v1, DRA, is served from 1.34 on; helm template: --kube-version)" $v.profile $mode .Capabilities.KubeVersion.Version $r.kubeVersion) -}}
{{- end -}}
{{- range $n := $r.names -}}
{{- $name := $n.name | replace $s.name $.Release.Name | replace $s.namespace $ns | replace $s.runId $runId | replace $s.user $v.user -}}
{{- if $recipeText -}}
{{- $name = replace $s.recipeHash (sha256sum $recipeText | trunc 10) $name -}}
{{- end -}}
{{- if gt (len $name) (int $n.maxLength) -}}
{{- fail (printf "nemo-rl-run: %s name %q has %d characters; expected at most %d. Shorten the release name (it names the run's objects), user or runId" $n.kind $name (len $name) (int $n.maxLength)) -}}
{{- end -}}
{{- if not (regexMatch $n.pattern $name) -}}
{{- fail (printf "nemo-rl-run: %s name %q does not match %s; check the release name, user and runId (a name that must be a DNS-1035 label cannot start with a digit)" $n.kind $name $n.pattern) -}}
{{- end -}}
{{- end -}}
{{- $_ := include "nemo-rl-run.recipeCheck" . -}}
{{- $secretRules := $meta.secrets -}}
{{- $data := .Files.Get $r.file -}}
{{- range $k := list $s.knobs.kueueQueue.key $s.knobs.fields.workloadPriorityClass.key -}}
{{- if hasKey $labels $k -}}
{{- $queueValue := ternary "queue" "kueueQueue" (hasKey $r.unavailable "kueueQueue") -}}
{{- fail (printf "nemo-rl-run: labels key %q: Kueue reads it from the RayJob (or RayCluster) alone, and labels reach every object and pod template of the run; expected the %s value, on a profile that names Kueue (scheduler.kind kueue, or scheduler.kueue beside KAI: it puts the label where Kueue reads it)" $k (ternary $queueValue "workloadPriorityClass" (eq $k $s.knobs.kueueQueue.key))) -}}
{{- end -}}
{{- end -}}
{{- range $field, $pairs := dict "labels" $labels "annotations" $annotations -}}
{{- if hasKey $pairs $meta.state.annotation -}}
{{- fail (printf "nemo-rl-run: %s key %q says a run's declared state (the review, the upgrade guard and Argo CD's health read it), as nrl-k8s render refuses it; expected the state value (state=%s), which also renders the run stopped" $field $meta.state.annotation $meta.state.stopped) -}}
{{- end -}}
{{- range $k := keys $pairs -}}
{{- if contains (printf "%s:" (toJson $k)) $data -}}
{{- fail (printf "nemo-rl-run: %s key %q is already set in the rendered objects (by the profile or the run identity); the chart adds keys, it does not replace them: use another key, or nrl-k8s render --%s%s" $field $k (trimSuffix "s" $field) (ternary " (for the queue: the queue value; for Kueue's LocalQueue beside KAI's queue: kueueQueue; for Kueue's priority class: the workloadPriorityClass value)" "" (has $k (list "kai.scheduler/queue" $s.knobs.kueueQueue.key $s.knobs.fields.workloadPriorityClass.key)))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $r.overridesToken -}}
{{- if $v.overrides -}}
{{- $q := list -}}
{{- range $o := $v.overrides -}}
{{- $o = toString $o -}}
{{- if regexMatch $s.shellSafe $o -}}
{{- $q = append $q $o -}}
{{- else -}}
{{- /* quoted as shell.Quote does (shlex.quote): whatever the override holds, it stays one word of the entrypoint */ -}}
{{- $q = append $q (printf "'%s'" (replace "'" "'\"'\"'" $o)) -}}
{{- end -}}
{{- end -}}
{{- $data = replace $s.override (include "nemo-rl-run.jsonText" (join " " $q)) $data -}}
{{- else -}}
{{- $data = replace $r.overridesToken "" $data -}}
{{- end -}}
{{- end -}}
{{- $data = include "nemo-rl-run.pairs" (dict "data" $data "sentinel" $s.label "field" "labels" "pairs" $labels) -}}
{{- $data = include "nemo-rl-run.pairs" (dict "data" $data "sentinel" $s.annotation "field" "annotations" "pairs" $annotations) -}}
{{- $data = include "nemo-rl-run.knobs" (dict "data" $data "v" $v "s" $s "p" $p "r" $r "mode" $mode "secrets" $secretRules) -}}
{{- /* every value lands inside a JSON string of the rendered data: as JSON string text, so a quote or a newline in it stays data whether or not the schema ran */ -}}
{{- $data = $data | replace $s.image (include "nemo-rl-run.jsonText" ($v.image | default $r.image)) | replace $s.name (include "nemo-rl-run.jsonText" .Release.Name) | replace $s.namespace (include "nemo-rl-run.jsonText" $ns) | replace $s.runId (include "nemo-rl-run.jsonText" $runId) | replace $s.user (include "nemo-rl-run.jsonText" $v.user) -}}
{{- /* last, so that no other substitution reaches into the recipe text */ -}}
{{- if $recipeText -}}
{{- /* the recipe ConfigMap is named by its text (manifest.RecipeHash: the first 10 hex digits of its SHA-256) */ -}}
{{- $data = replace $s.recipeHash (sha256sum $recipeText | trunc 10) $data -}}
{{- $data = replace (toJson $s.recipe) (toJson $recipeText) $data -}}
{{- end -}}
{{- if eq $state $meta.state.stopped -}}
{{- $data = include "nemo-rl-run.stop" (dict "data" $data "plan" $r.stopped) -}}
{{- end -}}
{{- $data -}}
{{- end -}}
{{- end -}}

{{/*
nemo-rl-run.stop: state stopped (chartgen.ApplyStop). The stopped form is
the engine's (manifest.Stop); chart-data read off, per render, how the
engine's stopped render differs from the running one: the documents it
leaves out and the fields it sets. This applies that list, and knows no
rule of its own.
*/}}
{{- define "nemo-rl-run.stop" -}}
{{- $docs := fromJsonArray .data -}}
{{- range $f := .plan.set -}}
{{- $m := index $docs (int $f.doc) -}}
{{- $last := sub (len $f.path) 1 -}}
{{- range $i, $k := $f.path -}}
{{- if lt $i $last -}}
{{- if not (kindIs "map" (get $m $k)) -}}
{{- $_ := set $m $k dict -}}
{{- end -}}
{{- $m = get $m $k -}}
{{- else -}}
{{- $_ := set $m $k $f.value -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $left := dict -}}
{{- range $i := .plan.leftOut -}}
{{- $_ := set $left (toString (int $i)) true -}}
{{- end -}}
{{- $kept := list -}}
{{- range $i, $d := $docs -}}
{{- if not (hasKey $left (toString $i)) -}}
{{- $kept = append $kept $d -}}
{{- end -}}
{{- end -}}
{{- toJson $kept -}}
{{- end -}}

{{/*
nemo-rl-run.jsonText: a value as the text of a JSON string (toJson without
its quotes). A sentinel sits inside a JSON string of the rendered data, so
what replaces it must be JSON string text: a " or a newline in a value is
then escaped data, never the end of the string and the start of a new key.
*/}}
{{- define "nemo-rl-run.jsonText" -}}
{{- toJson (toString .) | trimPrefix "\"" | trimSuffix "\"" -}}
{{- end -}}

{{/*
nemo-rl-run.knobs: the per-run values for profile keys (chartgen/knobs.go:
each means what an infra.* override of nrl-k8s render means, and the
engine applied it to the rendered data's sentinels): checks them, then puts
them, or the profile's own values, in place of the sentinels. A value the
render has no sentinel for (the mode or the profile has nothing it applies
to) is refused with the reason chart-data recorded; keys, variables and
tolerations the rendered objects already carry are refused (the chart adds,
it does not replace).
*/}}
{{- define "nemo-rl-run.knobs" -}}
{{- $d := .data -}}
{{- $v := .v -}}
{{- $s := .s -}}
{{- $k := $s.knobs -}}
{{- $p := .p -}}
{{- $r := .r -}}
{{- $set := dict -}}
{{- range $n := list "queue" "kueueQueue" "priorityClassName" "workloadPriorityClass" "nodeSelector" "tolerations" "env" -}}
{{- if get $v $n -}}
{{- $_ := set $set $n true -}}
{{- end -}}
{{- end -}}
{{- range $n := list "suspend" "ttlSecondsAfterFinished" -}}
{{- if not (kindIs "invalid" (index $v $n)) -}}
{{- $_ := set $set $n true -}}
{{- end -}}
{{- end -}}
{{- range $n := keys $set | sortAlpha -}}
{{- if hasKey $r.unavailable $n -}}
{{- fail (printf "nemo-rl-run: %s: profile %s in %s mode cannot take this value: %s" $n $v.profile $.mode (index $r.unavailable $n)) -}}
{{- end -}}
{{- end -}}
{{- /* text the chart's substitutions put in place must hold no sentinel */ -}}
{{- $texts := dict "queue" ($v.queue | default "") "kueueQueue" ($v.kueueQueue | default "") "priorityClassName" ($v.priorityClassName | default "") "workloadPriorityClass" ($v.workloadPriorityClass | default "") -}}
{{- range $key, $val := $v.nodeSelector | default dict -}}
{{- $_ := set $texts (printf "nodeSelector key %q" $key) $key -}}
{{- $_ := set $texts (printf "nodeSelector.%s" $key) (toString $val) -}}
{{- end -}}
{{- /* env: a list of {name, value} or a mapping; the engine's is a mapping, in name order */ -}}
{{- $env := dict -}}
{{- if kindIs "slice" $v.env -}}
{{- range $i, $e := $v.env -}}
{{- if hasKey $env $e.name -}}
{{- fail (printf "nemo-rl-run: env[%d]: %s is listed twice; expected each variable once" $i $e.name) -}}
{{- end -}}
{{- $_ := set $env $e.name (toString ($e.value | default "")) -}}
{{- end -}}
{{- else -}}
{{- range $name, $val := $v.env | default dict -}}
{{- $_ := set $env $name (toString $val) -}}
{{- end -}}
{{- end -}}
{{- range $name, $val := $env -}}
{{- $_ := set $texts (printf "env name %s" $name) $name -}}
{{- $_ := set $texts (printf "env.%s" $name) $val -}}
{{- end -}}
{{- range $i, $t := $v.tolerations -}}
{{- $_ := set $texts (printf "tolerations[%d].key" $i) $t.key -}}
{{- $_ := set $texts (printf "tolerations[%d].value" $i) ($t.value | default "") -}}
{{- end -}}
{{- range $name, $val := $texts -}}
{{- range $x := $s.reserved -}}
{{- if contains $x $val -}}
{{- fail (printf "nemo-rl-run: %s %q: values containing %s are reserved (the chart's placeholders)" $name $val (join ", " $s.reserved)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if and $v.queue (contains (printf "%s:%s" (toJson $k.kueueQueue.key) $k.kueueQueue.value) $d) (not (regexMatch $k.kueueQueuePattern (toString $v.queue))) -}}
{{- fail (printf "nemo-rl-run: queue %q: profile %s queues with Kueue; expected a LocalQueue name (a DNS-1123 subdomain: lower case letters, digits, '-' and '.'), the value of the kueue.x-k8s.io/queue-name label" $v.queue $v.profile) -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "queue") -}}
{{- /* KAI's label or Kueue's: a render holds the one its scheduler reads */ -}}
{{- range $f := list $k.fields.queue $k.kueueQueue -}}
{{- $d = include "nemo-rl-run.field" (dict "data" $d "f" $f "value" (toJson ($v.queue | default $p.defaults.queue))) -}}
{{- end -}}
{{- end -}}
{{- if and $v.kueueQueue (not (regexMatch $k.kueueQueuePattern (toString $v.kueueQueue))) -}}
{{- fail (printf "nemo-rl-run: kueueQueue %q: expected a LocalQueue name (a DNS-1123 subdomain: lower case letters, digits, '-' and '.'), the value of the kueue.x-k8s.io/queue-name label" $v.kueueQueue) -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "kueueQueue") -}}
{{- $d = include "nemo-rl-run.field" (dict "data" $d "f" $k.fields.kueueQueue "value" (toJson ($v.kueueQueue | default $p.defaults.kueueQueue))) -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "priorityClassName") -}}
{{- $pc := $v.priorityClassName | default $p.defaults.priorityClassName -}}
{{- $d = include "nemo-rl-run.field" (dict "data" $d "f" $k.fields.priorityClassName "value" (ternary (toJson $pc) "" (ne $pc ""))) -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "workloadPriorityClass") -}}
{{- $wp := $v.workloadPriorityClass | default $p.defaults.workloadPriorityClass -}}
{{- $d = include "nemo-rl-run.field" (dict "data" $d "f" $k.fields.workloadPriorityClass "value" (ternary (toJson $wp) "" (ne $wp ""))) -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "nodeSelector") -}}
{{- range $key := keys ($v.nodeSelector | default dict) | sortAlpha -}}
{{- $had := index $r.taken.nodeSelector $key -}}
{{- if and $had (or (gt (len $had) 1) (ne (first $had) (toString (index $v.nodeSelector $key)))) -}}
{{- fail (printf "nemo-rl-run: nodeSelector key %q: the GPU workers already select %s (the profile's placement or pod specs); the chart adds node selector keys, it does not replace them: use another key, or nrl-k8s render with infra.placement.nodeSelector" $key (join ", " $had)) -}}
{{- end -}}
{{- end -}}
{{- $d = include "nemo-rl-run.pairs" (dict "data" $d "sentinel" $k.nodeSelector "field" "nodeSelector" "pairs" ($v.nodeSelector | default dict)) -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "tolerations") -}}
{{- $elems := list -}}
{{- range $i, $t := $v.tolerations -}}
{{- $m := dict "key" $t.key "operator" ($t.operator | default "Equal") "effect" ($t.effect | default "NoSchedule") -}}
{{- if $t.value -}}
{{- $_ := set $m "value" $t.value -}}
{{- end -}}
{{- if not (kindIs "invalid" $t.tolerationSeconds) -}}
{{- $_ := set $m "tolerationSeconds" (int64 $t.tolerationSeconds) -}}
{{- end -}}
{{- if and (eq $m.operator "Exists") (hasKey $m "value") -}}
{{- fail (printf "nemo-rl-run: tolerations[%d].value %q with operator Exists: expected no value (Exists matches any value of the key)" $i $m.value) -}}
{{- end -}}
{{- if and (hasKey $m "tolerationSeconds") (ne $m.effect "NoExecute") -}}
{{- fail (printf "nemo-rl-run: tolerations[%d].tolerationSeconds is set with effect %s; expected effect NoExecute (only a NoExecute taint evicts after a time)" $i $m.effect) -}}
{{- end -}}
{{- $j := toJson $m -}}
{{- if has $j $elems -}}
{{- fail (printf "nemo-rl-run: tolerations[%d] %s is listed twice; expected each toleration once" $i $j) -}}
{{- end -}}
{{- if has $j $r.taken.tolerations -}}
{{- fail (printf "nemo-rl-run: tolerations[%d] %s: the GPU workers already carry it (the profile tolerates that taint); expected only tolerations the profile lacks" $i $j) -}}
{{- end -}}
{{- $elems = append $elems $j -}}
{{- end -}}
{{- $d = include "nemo-rl-run.elements" (dict "data" $d "sentinel" $k.toleration "field" "tolerations" "elems" $elems) -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "env") -}}
{{- $elems := list -}}
{{- range $name := keys $env | sortAlpha -}}
{{- $val := get $env $name -}}
{{- $lit := trimAll "\"'" (trim $val) -}}
{{- if and $lit (not (hasPrefix "$" $lit)) (include "nemo-rl-run.credentialName" (dict "name" $name "rules" $.secrets)) -}}
{{- fail (printf "nemo-rl-run: env.%s holds a literal value under a credential-looking name; expected the credential from a Secret (valueFrom.secretKeyRef in a profile's spec: the env value carries plain text into the manifest)" $name) -}}
{{- end -}}
{{- range $sh := $.secrets.shapes -}}
{{- if regexMatch $sh.pattern $val -}}
{{- fail (printf "nemo-rl-run: env.%s holds %s; expected no credential in a value (reference a Secret from a profile's spec)" $name $sh.kind) -}}
{{- end -}}
{{- end -}}
{{- if has $name $r.taken.env -}}
{{- fail (printf "nemo-rl-run: env %s is already set in the run's containers (by the profile); the chart adds variables, it does not replace them: use another name, or a profile of your own" $name) -}}
{{- end -}}
{{- $elems = append $elems (ternary (toJson (dict "name" $name "value" $val)) (toJson (dict "name" $name)) (ne $val "")) -}}
{{- end -}}
{{- $d = include "nemo-rl-run.elements" (dict "data" $d "sentinel" $k.env "field" "env" "elems" $elems) -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "suspend") -}}
{{- $on := $p.defaults.suspend -}}
{{- if not (kindIs "invalid" $v.suspend) -}}
{{- $on = $v.suspend -}}
{{- end -}}
{{- $d = include "nemo-rl-run.field" (dict "data" $d "f" $k.fields.suspend "value" (ternary "true" "" $on)) -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "ttlSecondsAfterFinished") -}}
{{- $ttl := int64 $p.defaults.ttlSecondsAfterFinished -}}
{{- if not (kindIs "invalid" $v.ttlSecondsAfterFinished) -}}
{{- $ttl = int64 $v.ttlSecondsAfterFinished -}}
{{- end -}}
{{- $d = include "nemo-rl-run.field" (dict "data" $d "f" $k.fields.ttlSecondsAfterFinished "value" (ternary (toString $ttl) "" (ne $ttl (int64 0)))) -}}
{{- end -}}
{{- $d -}}
{{- end -}}

{{/*
nemo-rl-run.credentialName: fn/analyse/secrets.Name (the rules come from Go, in
files/profiles.json): "true" when the name is a credential's.
*/}}
{{- define "nemo-rl-run.credentialName" -}}
{{- $r := .rules -}}
{{- $words := list -}}
{{- range $w := regexSplit "[^A-Z0-9]+" (upper .name) -1 -}}
{{- if $w -}}
{{- $words = append $words $w -}}
{{- end -}}
{{- end -}}
{{- $hit := false -}}
{{- range $i, $w := $words -}}
{{- if or (has $w $r.parts) (and (eq $w "KEY") (eq $i (sub (len $words) 1))) -}}
{{- $hit = true -}}
{{- else if not (has $w $r.harmless) -}}
{{- range $c := $r.words -}}
{{- if contains $c $w -}}
{{- $hit = true -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $joined := join "" $words -}}
{{- range $c := $r.joined -}}
{{- if contains $c $joined -}}
{{- $hit = true -}}
{{- end -}}
{{- end -}}
{{- if $hit -}}true{{- end -}}
{{- end -}}

{{/*
nemo-rl-run.field: chartgen.substituteField: a scalar knob's value (JSON
text) in place of its sentinel field; an empty value removes the field, as
the engine omits an empty one.
*/}}
{{- define "nemo-rl-run.field" -}}
{{- $tok := printf "%s:%s" (toJson .f.key) .f.value -}}
{{- if .value -}}
{{- replace $tok (printf "%s:%s" (toJson .f.key) .value) .data -}}
{{- else -}}
{{- .data | replace (printf "%s," $tok) "" | replace (printf ",%s" $tok) "" -}}
{{- end -}}
{{- end -}}

{{/*
nemo-rl-run.elements: chartgen.substituteElements: list elements (JSON
texts) in place of the sentinel element; without any, the element goes,
and a list it was alone in goes too, as the engine omits empty lists.
*/}}
{{- define "nemo-rl-run.elements" -}}
{{- $sent := .sentinel -}}
{{- if .elems -}}
{{- replace $sent (join "," .elems) .data -}}
{{- else -}}
{{- .data | replace (printf "%q:[%s]," .field $sent) "" | replace (printf ",%q:[%s]" .field $sent) "" | replace (printf ",%s" $sent) "" | replace (printf "%s," $sent) "" -}}
{{- end -}}
{{- end -}}

{{/*
nemo-rl-run.chartLabels: the labels the chart adds to every object and pod
template of the run, as JSON: Helm's conventions (helm create's helpers):
helm.sh/chart cut to 63 characters (a label value's limit; unlike helm
create's helper, trailing '_' and '.' go too: a label value ends
alphanumeric), the chart's
name and appVersion. app.kubernetes.io/managed-by is Helm in the data
already (chartgen.ChartManagedBy), as Helm writes it on install.
*/}}
{{- define "nemo-rl-run.chartLabels" -}}
{{- $l := dict "helm.sh/chart" (printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimAll "-_.") "app.kubernetes.io/name" (.Chart.Name | trunc 63 | trimAll "-_.") -}}
{{- if .Chart.AppVersion -}}
{{- $_ := set $l "app.kubernetes.io/version" (.Chart.AppVersion | replace "+" "_" | trunc 63 | trimAll "-_.") -}}
{{- end -}}
{{- toJson $l -}}
{{- end -}}

{{/*
nemo-rl-run.key: which rendered variant the values select: <mode>, with
.runid for a run id; rayjob.recipe[.runid] for a `recipe` value, which the
run ships in a ConfigMap (launch.recipeSource=configMap, rayjob only).
*/}}
{{- define "nemo-rl-run.key" -}}
{{- $v := .Values -}}
{{- $key := $v.mode | default "rayjob" -}}
{{- if $v.recipe -}}
{{- if ne $key "rayjob" -}}
{{- fail (printf "nemo-rl-run: recipe: mode %s cannot ship a recipe value (the engine ships a recipe in a ConfigMap for a RayJob only: launch.recipeSource=configMap); expected mode rayjob, or nrl-k8s render for a raycluster run of another recipe" $key) -}}
{{- end -}}
{{- $key = "rayjob.recipe" -}}
{{- end -}}
{{- if $v.runId -}}
{{- $key = printf "%s.runid" $key -}}
{{- end -}}
{{- $key -}}
{{- end -}}

{{/*
nemo-rl-run.recipeText: the `recipe` value as the run's ConfigMap carries
it, "" without one: the YAML mapping re-written with toYaml (sorted keys,
sigs.k8s.io/yaml, as manifest.RecipeYAML writes the merged recipe), plus
the final newline toYaml drops. The chart cannot follow a defaults: chain
(its files are on the user's disk), so it asks for the merged recipe,
which nrl-k8s recipe-merge prints.
*/}}
{{- define "nemo-rl-run.recipeText" -}}
{{- $v := .Values -}}
{{- if $v.recipe -}}
{{- $meta := .Files.Get "files/profiles.json" | fromJson -}}
{{- $p := index $meta.profiles ($v.profile | default "") -}}
{{- if and $p $p.noRecipeValue -}}
{{- fail (printf "nemo-rl-run: recipe: profile %s cannot ship a recipe value: %s" $v.profile $p.noRecipeValue) -}}
{{- end -}}
{{- $rec := fromYaml $v.recipe -}}
{{- if hasKey $rec "Error" -}}
{{- fail (printf "nemo-rl-run: recipe: cannot read it as a YAML mapping: %s" (get $rec "Error")) -}}
{{- end -}}
{{- if not $rec -}}
{{- fail "nemo-rl-run: recipe: the value is an empty mapping; expected a NeMo-RL recipe (--set-file recipe=FILE)" -}}
{{- end -}}
{{- if hasKey $rec "defaults" -}}
{{- fail "nemo-rl-run: recipe: it has a defaults: chain, whose files the chart cannot read; expected the merged recipe: nrl-k8s recipe-merge RECIPE > merged.yaml, then --set-file recipe=merged.yaml (the same text nrl-k8s render ships with launch.recipeSource: configMap)" -}}
{{- end -}}
{{- if hasKey $rec "infra" -}}
{{- fail "nemo-rl-run: recipe: it has an infra: key, which changes the profile; this chart carries its profiles pre-rendered: move those keys into a profile (nrl-k8s chart-new) or use nrl-k8s render" -}}
{{- end -}}
{{- if contains $meta.sentinels.recipe $v.recipe -}}
{{- fail (printf "nemo-rl-run: recipe: text containing %s is reserved (the chart's placeholder)" $meta.sentinels.recipe) -}}
{{- end -}}
{{- printf "%s\n" (toYaml $rec) -}}
{{- end -}}
{{- end -}}

{{/*
nemo-rl-run.pairs: chartgen.substitutePairs: the run's labels or
annotations in place of the sentinel pair, as JSON text (fromJsonArray and
toYaml sort keys as the engine does); without any, the pair goes, and a
map it was alone in goes too, as the engine prunes empty maps.
*/}}
{{- define "nemo-rl-run.pairs" -}}
{{- $d := .data -}}
{{- $sent := .sentinel -}}
{{- if .pairs -}}
{{- $text := list -}}
{{- range $k := keys .pairs | sortAlpha -}}
{{- $text = append $text (printf "%s:%s" (toJson $k) (toJson (toString (get $.pairs $k)))) -}}
{{- end -}}
{{- replace $sent (join "," $text) $d -}}
{{- else -}}
{{- $d | replace (printf "%q:{%s}," .field $sent) "" | replace (printf ",%q:{%s}" .field $sent) "" | replace (printf ",%s" $sent) "" | replace (printf "%s," $sent) "" -}}
{{- end -}}
{{- end -}}

{{/*
nemo-rl-run.docsOnce: nemo-rl-run.docs, worked out once per render. Helm
executes every template of a chart with the same top-level context, so the
first caller keeps the result there and the other document slots and
NOTES.txt read it (without this, each re-read the profile data and
substituted the whole run again: 5 times per release). Where a Helm made a
copy per template, each would work it out again: slower, same bytes.
*/}}
{{- define "nemo-rl-run.docsOnce" -}}
{{- if not (hasKey . "nemoRLRunDocs") -}}
{{- $_ := set . "nemoRLRunDocs" (include "nemo-rl-run.docs" .) -}}
{{- end -}}
{{- get . "nemoRLRunDocs" -}}
{{- end -}}

{{/*
nemo-rl-run.doc: document N (list root N) as YAML, nothing past the last.
toYaml is sigs.k8s.io/yaml.Marshal without its final newline, as emit.Stream
writes each document.
*/}}
{{- define "nemo-rl-run.doc" -}}
{{- $root := index . 0 -}}
{{- $i := index . 1 -}}
{{- $data := include "nemo-rl-run.docsOnce" $root -}}
{{- if $data -}}
{{- $docs := fromJsonArray $data -}}
{{- if lt $i (len $docs) -}}
{{- $doc := index $docs $i -}}
{{- if eq $i 0 -}}
{{- include "nemo-rl-run.upgradeGuard" (list $root $docs) -}}
{{- end -}}
{{- toYaml $doc -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
nemo-rl-run.upgradeGuard (list root docs), from the first slot: helm upgrade
of a run fails while any of its RayJobs or RayClusters exists, naming each
(with its state) and why: KubeRay starts a RayJob once
and ignores a changed spec afterwards, and does not roll a RayCluster's
pods on a template change, so the upgrade would report success and change
nothing that runs (or mix old and new pods). A change is a new run (a new
release name). lookup finds nothing under helm template (no cluster), so
rendering is unaffected; helm rollback does not render templates, so it is
not guarded (README, "Upgrades and rollbacks", says what it does, as
tests/afterapply TestHelmUpgradeAndRollback measures it). A services
release (mode=services) renders neither kind and upgrades freely. A run's
life changes take effect and pass: an upgrade to state stopped (KubeRay
honours spec.suspend), and any upgrade of a run whose live objects are
stopped (annotated so by the engine: KubeRay builds the cluster it starts
again from the spec as it is then).
*/}}
{{- define "nemo-rl-run.upgradeGuard" -}}
{{- $root := index . 0 -}}
{{- $st := (($root.Files.Get "files/profiles.json" | fromJson).state) -}}
{{- if and $root.Release.IsUpgrade (ne ($root.Values.state | default "run") $st.stopped) -}}
{{- $found := list -}}
{{- $why := list -}}
{{- range $doc := index . 1 -}}
{{- if has $doc.kind (list "RayJob" "RayCluster") -}}
{{- $live := lookup $doc.apiVersion $doc.kind $doc.metadata.namespace $doc.metadata.name -}}
{{- if and $live (ne (index (($live.metadata).annotations | default dict) $st.annotation | default "") $st.stopped) -}}
{{- $state := "" -}}
{{- if $live.status -}}
{{- $state = $live.status.jobDeploymentStatus | default $live.status.state | default "" -}}
{{- end -}}
{{- $found = append $found (printf "%s %s/%s exists%s" $doc.kind $doc.metadata.namespace $doc.metadata.name (ternary (printf " (%s)" $state) "" (ne $state ""))) -}}
{{- if eq $doc.kind "RayCluster" -}}
{{- $why = append $why "KubeRay does not roll a RayCluster's pods when its template changes (old and new pods would mix)" -}}
{{- else -}}
{{- $why = append $why "KubeRay starts a RayJob once and ignores a changed spec afterwards" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $found -}}
{{- fail (printf "nemo-rl-run: helm upgrade of run %s: %s and %s, so this upgrade would change nothing that runs. A change is a new run: helm install NEW-NAME with the new values (or helm uninstall %s first, which ends this run)" $root.Release.Name (join ", " $found) (join "; " (uniq $why)) $root.Release.Name) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
nemo-rl-run.serviceNames (list profileMeta user sentinelUser): the
profile's shared services (its deployments and their Services: the render
of mode=services) as "Kind name, ..." for messages; "" for a profile
without any. Run renders leave them out (chartgen renders runs with
--no-deployments): only a services release installs them.
*/}}
{{- define "nemo-rl-run.serviceNames" -}}
{{- $p := index . 0 -}}
{{- $user := index . 1 -}}
{{- $sent := index . 2 -}}
{{- $out := list -}}
{{- range $p.services -}}
{{- $out = append $out (printf "%s %s" .kind (.name | replace $sent $user)) -}}
{{- end -}}
{{- join ", " $out -}}
{{- end -}}

{{/*
nemo-rl-run.servicesRelease (list profileMeta user sentinelUser): the
release name messages suggest for the services release: the first
Deployment's name (profiles that share a sandbox share its release), else
<user>-services when that name is too long for a release.
*/}}
{{- define "nemo-rl-run.servicesRelease" -}}
{{- $p := index . 0 -}}
{{- $user := index . 1 -}}
{{- $name := printf "%s-services" $user -}}
{{- range $p.services -}}
{{- $n := .name | replace (index $ 2) $user -}}
{{- if and (eq .kind "Deployment") (le (len $n) 53) (eq $name (printf "%s-services" $user)) -}}
{{- $name = $n -}}
{{- end -}}
{{- end -}}
{{- $name -}}
{{- end -}}

{{/*
nemo-rl-run.recipeCheck: the chart's subset of `nrl-k8s check`: the
effective cluster.gpus_per_node must equal every training worker's GPUs and
cluster.num_nodes must not exceed the training cluster's GPU nodes. The
value comes from the last run override that sets it, else the entrypoint's
overrides, else the recipe value (or, without one, the packaged recipe).
Fails on a mismatch; returns notes (one per line) for NOTES.txt.
*/}}
{{- define "nemo-rl-run.recipeCheck" -}}
{{- $meta := .Files.Get "files/profiles.json" | fromJson -}}
{{- $v := .Values -}}
{{- $p := index $meta.profiles ($v.profile | default "") -}}
{{- $mode := $v.mode | default "rayjob" -}}
{{- $notes := list -}}
{{- if and $p (not (has $mode (list "dev" "services"))) -}}
{{- $recipe := dict -}}
{{- $recipeName := printf "the packaged recipe %s" $p.recipe -}}
{{- if $v.recipe -}}
{{- $recipe = fromYaml $v.recipe -}}
{{- $recipeName = "the recipe value" -}}
{{- end -}}
{{- $got := dict -}}
{{- range $k := list "gpus_per_node" "num_nodes" -}}
{{- $val := "" -}}
{{- $origin := "" -}}
{{- range $o := $v.overrides -}}
{{- if regexMatch (printf "^(\\+\\+|\\+)?cluster\\.%s=[0-9]+$" $k) $o -}}
{{- $val = regexReplaceAll "^[^=]*=" $o "" -}}
{{- $origin = printf "run override %q" $o -}}
{{- else if regexMatch (printf "^(\\+\\+|\\+|~)?cluster\\.%s(=|$)" $k) $o -}}
{{- $val = "" -}}
{{- $origin = printf "run override %q" $o -}}
{{- end -}}
{{- end -}}
{{- if and (not $origin) (hasKey $p.entrypointCluster $k) -}}
{{- $val = index $p.entrypointCluster $k | int | toString -}}
{{- $origin = printf "entrypoint override \"cluster.%s=%s\"" $k $val -}}
{{- end -}}
{{- if not $origin -}}
{{- if $v.recipe -}}
{{- $c := get $recipe "cluster" -}}
{{- if and (kindIs "map" $c) (hasKey $c $k) -}}
{{- $val = toString (get $c $k) -}}
{{- $origin = printf "%s (cluster.%s)" $recipeName $k -}}
{{- else -}}
{{- $notes = append $notes (printf "recipe check: the recipe value sets no cluster.%s; not checked." $k) -}}
{{- end -}}
{{- else if hasKey $p.recipeCluster $k -}}
{{- $val = index $p.recipeCluster $k | int | toString -}}
{{- $origin = printf "%s (cluster.%s)" $recipeName $k -}}
{{- end -}}
{{- end -}}
{{- if regexMatch "^[0-9]+$" $val -}}
{{- $_ := set $got $k (list (atoi $val) $origin) -}}
{{- else if $origin -}}
{{- $notes = append $notes (printf "recipe check: cluster.%s is not a literal integer (set by %s); not checked." $k $origin) -}}
{{- end -}}
{{- end -}}
{{- if hasKey $got "gpus_per_node" -}}
{{- $want := index $got "gpus_per_node" -}}
{{- range $g := $p.capacity.gpusPerWorker -}}
{{- if ne (int $g) (index $want 0) -}}
{{- fail (printf "nemo-rl-run: recipe check: profile %s gives each training worker %d GPUs; expected %d, the recipe's cluster.gpus_per_node (set by %s)" $v.profile (int $g) (index $want 0) (index $want 1)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $capacity := int $p.capacity.gpuNodes -}}
{{- if and (hasKey $got "num_nodes") (gt $capacity 0) -}}
{{- $want := index $got "num_nodes" -}}
{{- if gt (index $want 0) $capacity -}}
{{- fail (printf "nemo-rl-run: recipe check: profile %s's training cluster provides %d GPU nodes (replicas x numOfHosts); expected at least %d, the recipe's cluster.num_nodes (set by %s): Ray would wait forever for the missing nodes" $v.profile $capacity (index $want 0) (index $want 1)) -}}
{{- else if and (lt (index $want 0) $capacity) (not (hasPrefix "entrypoint" (index $want 1))) (not (hasPrefix "the packaged" (index $want 1))) -}}
{{- /* idle nodes from the packaged data are among the engine's own warnings already */ -}}
{{- $notes = append $notes (printf "recipe check: warning: the training cluster provides %d GPU nodes but cluster.num_nodes is %d (set by %s): %d nodes will sit idle." $capacity (index $want 0) (index $want 1) (sub $capacity (index $want 0))) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- join "\n" $notes -}}
{{- end -}}

{{/*
nemo-rl-run.testMeta (list root kind weight deletePolicy): metadata of a
`helm test` hook object (templates/tests/). No app.kubernetes.io/instance:
nrl-k8s status finds a run by that label, and the hook is not part of the
run (its Pod would count among the run's pods); part-of names the release.
*/}}
{{- define "nemo-rl-run.testMeta" -}}
{{- $root := index . 0 -}}
{{- $labels := merge (dict "app.kubernetes.io/managed-by" "Helm" "app.kubernetes.io/component" "helm-test" "app.kubernetes.io/part-of" $root.Release.Name) (include "nemo-rl-run.chartLabels" $root | fromJson) -}}
{{- $meta := dict "name" (printf "%s-status-test" $root.Release.Name) "namespace" ($root.Values.namespace | default $root.Release.Namespace) "labels" $labels "annotations" (dict "helm.sh/hook" "test" "helm.sh/hook-weight" (index . 1) "helm.sh/hook-delete-policy" (index . 2)) -}}
{{- toYaml $meta -}}
{{- end -}}

{{/*
nemo-rl-run.testEnabled: "true" when the helm test hook renders (test.enabled);
the image is required then.
*/}}
{{- define "nemo-rl-run.testEnabled" -}}
{{- $t := .Values.test | default dict -}}
{{- if $t.enabled -}}
{{- $_ := required "nemo-rl-run: test.image is required with test.enabled (the nrl-k8s image, e.g. ghcr.io/nemo-rl-krm/nrl-k8s:v0.1.0)" $t.image -}}
true
{{- end -}}
{{- end -}}
