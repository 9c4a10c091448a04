{{/*
This chart holds no rendering rule. files/rendered/*.json is the Go
engine's output (nrl-k8s chart-data) for each packaged profile, rendered
with sentinel run parameters; these helpers replace the sentinels with the
values. values.schema.json, generated with the data, checks the values
(Helm runs it before any template); a `fail` here says what a schema
cannot. doc-NN.yaml then writes document NN with toYaml, the same
sigs.k8s.io/yaml.Marshal nrl-k8s ends with, so `helm template` equals
`nrl-k8s render` byte for byte (docs/architecture.md).
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
{{- /* required here, not in the schema: helm lint renders the empty defaults, where `required` only logs */ -}}
{{- $_ := required (printf "nemo-rl-run: the profile value is required (one of: %s)" (keys $meta.profiles | sortAlpha | join ", ")) $v.profile -}}
{{- $_ := required "nemo-rl-run: the user value is required (--set user=<you>, as nrl-k8s --user)" $v.user -}}
{{- if and $v.profile $v.user -}}
{{- $p := index $meta.profiles $v.profile -}}
{{- $mode := $v.mode | default "rayjob" -}}
{{- $state := $v.state | default "run" -}}
{{- $ns := $v.namespace | default .Release.Namespace -}}
{{- /* the release namespace is no value: the schema cannot see it */ -}}
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
{{- /* the release name is no value, and a schema's `not` names nothing expected */ -}}
{{- range $name, $val := $texts -}}
{{- range $r := $reserved -}}
{{- if contains $r (toString $val) -}}
{{- fail (printf "nemo-rl-run: %s %q: values containing %s are reserved (the chart's placeholders)" $name $val (join ", " $reserved)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- /* the schema checks the user, runId and namespace values; the release namespace is none */ -}}
{{- if and (not $v.namespace) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $ns)) -}}
{{- fail (printf "nemo-rl-run: release namespace %q: expected a DNS label (lower case letters, digits and '-', starting and ending with a letter or digit)" $ns) -}}
{{- end -}}
{{- range $i, $o := $v.overrides -}}
{{- /* a schema's `not` names nothing expected: Helm would say only "'not' failed" */ -}}
{{- if regexMatch "^[+~]*infra([.=]|$)" $o -}}
{{- fail (printf "nemo-rl-run: overrides[%d] %q: infra.* overrides change the profile, and this chart carries its profiles pre-rendered; use nrl-k8s render or the KRM function for them" $i $o) -}}
{{- end -}}
{{- /* the chart's placeholders: as for the texts above */ -}}
{{- if or (contains $s.user $o) (contains $s.runId $o) (contains $s.namespace $o) (contains $s.name $o) (contains $s.image $o) (contains $s.override $o) -}}
{{- fail (printf "nemo-rl-run: overrides[%d] %q: values containing %q, %q, %q, %q, %q or %q are reserved (the chart's placeholders)" $i $o $s.user $s.runId $s.namespace $s.name $s.image $s.override) -}}
{{- end -}}
{{- end -}}
{{- $key := include "nemo-rl-run.key" . -}}
{{- $recipeText := include "nemo-rl-run.recipeText" . -}}
{{- $r := index $p.renders $key -}}
{{- /* A cluster version that is not semver (a Kubernetes built without its release ldflags reports v0.0.0-master+$Format:%H$) cannot be compared: not checked; the API server refuses kinds it does not serve. */ -}}
{{- /* the cluster's version is no value */ -}}
{{- if and $r.kubeVersion (regexMatch "^v?[0-9]+[.][0-9]+[.][0-9]+(-[0-9A-Za-z.-]+)?([+][0-9A-Za-z.-]+)?$" .Capabilities.KubeVersion.Version) (not (semverCompare $r.kubeVersion .Capabilities.KubeVersion.Version)) -}}
{{- fail (printf "nemo-rl-run: profile %s in %s mode renders API versions Kubernetes %s does not serve; expected a cluster version %s (resource.k8s.io/v1, DRA, is served from 1.34 on; helm template: --kube-version)" $v.profile $mode .Capabilities.KubeVersion.Version $r.kubeVersion) -}}
{{- end -}}
{{- /* the generated names: the release name with the values, known only here */ -}}
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
{{- /* these keys' messages name the value to use instead, which a schema's message cannot */ -}}
{{- range $k := list $s.knobs.kueueQueue.key $s.knobs.fields.workloadPriorityClass.key -}}
{{- if hasKey $labels $k -}}
{{- $queueValue := ternary "queue" "kueueQueue" (hasKey $r.unavailable "kueueQueue") -}}
{{- fail (printf "nemo-rl-run: labels key %q: Kueue reads it from the RayJob (or RayCluster) alone, and labels reach every object and pod template of the run; expected the %s value, on a profile that names Kueue (scheduler.kind kueue, or scheduler.kueue beside KAI: it puts the label where Kueue reads it)" $k (ternary $queueValue "workloadPriorityClass" (eq $k $s.knobs.kueueQueue.key))) -}}
{{- end -}}
{{- end -}}
{{- range $field, $pairs := dict "labels" $labels "annotations" $annotations -}}
{{- /* a schema's `not` names nothing expected, nor the state value to use */ -}}
{{- if hasKey $pairs $meta.state.annotation -}}
{{- fail (printf "nemo-rl-run: %s key %q says a run's declared state (the review, the upgrade guard and Argo CD's health read it), as nrl-k8s render refuses it; expected the state value (state=%s), which also renders the run stopped" $field $meta.state.annotation $meta.state.stopped) -}}
{{- end -}}
{{- range $k := keys $pairs -}}
{{- /* keys the rendered objects carry: the render's data, not the values */ -}}
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
{{- $data = include "nemo-rl-run.knobs" (dict "data" $data "v" $v "s" $s "p" $p "r" $r "secrets" $secretRules) -}}
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
{{- /* the recipe's content: a schema sees one string */ -}}
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
{{- /* what lives in the cluster (lookup): no value */ -}}
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
{{- /* the recipe's and the overrides' content: no schema reads it */ -}}
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
nemo-rl-run.testEnabled: "true" when the helm test hook renders (test.enabled;
the schema requires test.image then).
*/}}
{{- define "nemo-rl-run.testEnabled" -}}
{{- if (.Values.test | default dict).enabled -}}
true
{{- end -}}
{{- end -}}
