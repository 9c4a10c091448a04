{{/*
The per-run knob values (chartgen/knobs.go) and the substitution helpers
nemo-rl-run.docs shares with them (chartgen/substitute.go is the same in
Go); split from _helpers.tpl, which calls them.
*/}}

{{/*
nemo-rl-run.knobs: the per-run values for profile keys (chartgen/knobs.go:
each means what an infra.* override of nrl-k8s render means, and the
engine applied it to the rendered data's sentinels): puts them, or the
profile's own values, in place of the sentinels. The schema refuses a value
the render has no sentinel for (the mode or the profile has nothing it
applies to; files/profiles.json and the README say why); this refuses keys,
variables and tolerations the rendered objects already carry (the chart
adds, it does not replace) and credentials.
*/}}
{{- define "nemo-rl-run.knobs" -}}
{{- $d := .data -}}
{{- $v := .v -}}
{{- $s := .s -}}
{{- $k := $s.knobs -}}
{{- $p := .p -}}
{{- $r := .r -}}
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
{{- /* uniqueItems compares whole items, not their names */ -}}
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
{{- /* as for the run's texts: a schema's `not` names nothing expected */ -}}
{{- range $name, $val := $texts -}}
{{- range $x := $s.reserved -}}
{{- if contains $x $val -}}
{{- fail (printf "nemo-rl-run: %s %q: values containing %s are reserved (the chart's placeholders)" $name $val (join ", " $s.reserved)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not (hasKey $r.unavailable "queue") -}}
{{- /* KAI's label or Kueue's: a render holds the one its scheduler reads */ -}}
{{- range $f := list $k.fields.queue $k.kueueQueue -}}
{{- $d = include "nemo-rl-run.field" (dict "data" $d "f" $f "value" (toJson ($v.queue | default $p.defaults.queue))) -}}
{{- end -}}
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
{{- /* what the GPU workers select: the render's data */ -}}
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
{{- $j := toJson $m -}}
{{- /* the same toleration after the defaults: no schema compares items so */ -}}
{{- if has $j $elems -}}
{{- fail (printf "nemo-rl-run: tolerations[%d] %s is listed twice; expected each toleration once" $i $j) -}}
{{- end -}}
{{- /* what the GPU workers tolerate: the render's data */ -}}
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
{{- /* fn/analyse/secrets' rules split and compare words: no pattern says them */ -}}
{{- if and $lit (not (hasPrefix "$" $lit)) (include "nemo-rl-run.credentialName" (dict "name" $name "rules" $.secrets)) -}}
{{- fail (printf "nemo-rl-run: env.%s holds a literal value under a credential-looking name; expected the credential from a Secret (valueFrom.secretKeyRef in a profile's spec: the env value carries plain text into the manifest)" $name) -}}
{{- end -}}
{{- /* a schema's `not` would name neither the value nor the credential's kind */ -}}
{{- range $sh := $.secrets.shapes -}}
{{- if regexMatch $sh.pattern $val -}}
{{- fail (printf "nemo-rl-run: env.%s holds %s; expected no credential in a value (reference a Secret from a profile's spec)" $name $sh.kind) -}}
{{- end -}}
{{- end -}}
{{- /* what the Ray containers set: the render's data */ -}}
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
