package chartgen

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Knobs are the per-run values the chart has for profile keys: each means
// what an `infra.` override of nrl-k8s render means (KnobOverrides), and
// the engine applies it; the chart only substitutes sentinels.
//
//	queue                    infra.scheduler.queue (KAI profiles: the kai.scheduler/queue label of every object and pod template;
//	                         Kueue profiles: the kueue.x-k8s.io/queue-name label of the object Kueue admits)
//	kueueQueue               infra.scheduler.kueue.queue (KAI places, Kueue admits: the kueue.x-k8s.io/queue-name label of the object Kueue admits)
//	priorityClassName        infra.scheduler.priorityClassName (every Ray pod: heads and workers)
//	workloadPriorityClass    infra.scheduler.workloadPriorityClass, or infra.scheduler.kueue.workloadPriorityClass when KAI places
//	                         (the kueue.x-k8s.io/priority-class label beside Kueue's queue label)
//	nodeSelector             keys added to infra.placement.nodeSelector (every GPU worker)
//	tolerations              appended to infra.placement.tolerations (every GPU worker)
//	env                      variables added to infra.env (every container of every Ray pod)
//	suspend                  infra.launch.rayjob.suspend (the RayJob: rayjob mode)
//	ttlSecondsAfterFinished  infra.launch.rayjob.ttlSecondsAfterFinished (the RayJob: rayjob mode)
type Knobs struct {
	// Queue, KueueQueue, PriorityClassName and WorkloadPriorityClass: "" is
	// the profile's.
	Queue, KueueQueue, PriorityClassName, WorkloadPriorityClass string
	NodeSelector                                                map[string]string
	Tolerations                                                 []profile.Toleration
	Env                                                         map[string]string
	// Suspend and TTL: nil is the profile's.
	Suspend *bool
	TTL     *int64
}

// Knob names, as the chart's values spell them, in the order the chart
// substitutes them.
const (
	KnobQueue = "queue"
	// KnobKueueQueue is Kueue's LocalQueue beside KAI's queue (profiles
	// with scheduler.kueue: KAI places, Kueue admits).
	KnobKueueQueue        = "kueueQueue"
	KnobPriorityClassName = "priorityClassName"
	// KnobWorkloadPriorityClass is Kueue's WorkloadPriorityClass of the run.
	KnobWorkloadPriorityClass = "workloadPriorityClass"
	KnobNodeSelector          = "nodeSelector"
	KnobTolerations           = "tolerations"
	KnobEnv                   = "env"
	KnobSuspend               = "suspend"
	KnobTTL                   = "ttlSecondsAfterFinished"
)

// KnobNames lists every knob.
var KnobNames = []string{KnobQueue, KnobKueueQueue, KnobPriorityClassName, KnobWorkloadPriorityClass, KnobNodeSelector, KnobTolerations, KnobEnv, KnobSuspend, KnobTTL}

// Knob sentinels: valid values the engine renders (a queue and a priority
// class name, a node label, a toleration, a variable, a TTL), which the
// chart replaces. The probe renders prove that they occur only where the
// knob put them.
const (
	SentinelQueue                  = "q7z7"
	SentinelKueueQueue             = "kq7z7"
	SentinelPriorityClass          = "pc7z7"
	SentinelWorkloadPriority       = "wp7z7"
	SentinelNodeKey                = "nrl-sentinel-node"
	SentinelNodeValue              = "s7z7"
	SentinelTolerationKey          = "nrl-sentinel-toleration"
	SentinelEnvName                = "NRL_SENTINEL_ENV"
	SentinelEnvValue               = "e7z7"
	SentinelTTL              int64 = 7077707
)

// KnobSentinels tells the chart what each knob's sentinel looks like in
// the rendered data (JSON text).
type KnobSentinels struct {
	// Scalar knobs: the field's key and its sentinel value as JSON; the
	// field goes when the knob's value is empty (0, false, "").
	Fields map[string]FieldSentinel `json:"fields"`
	// KueueQueue is the queue knob's field in a Kueue profile's render
	// (Fields' queue is KAI's label): the chart replaces both, a render
	// holds the one its scheduler reads.
	KueueQueue FieldSentinel `json:"kueueQueue"`
	// KueueQueuePattern is what Kueue accepts as a LocalQueue name (the
	// engine's rule for scheduler.queue under Kueue), stricter than the
	// schema's label value: the chart checks a Kueue render's queue with it.
	KueueQueuePattern string `json:"kueueQueuePattern"`
	// NodeSelector is the sentinel pair; Toleration and Env the sentinel
	// list elements.
	NodeSelector string `json:"nodeSelector"`
	Toleration   string `json:"toleration"`
	Env          string `json:"env"`
}

// FieldSentinel is one scalar knob's field in the rendered data.
type FieldSentinel struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Token is the field as encoding/json writes it.
func (f FieldSentinel) Token() string { return jsonString(f.Key) + ":" + f.Value }

var knobSentinels = KnobSentinels{
	Fields: map[string]FieldSentinel{
		KnobQueue:                 {Key: vocab.KAIQueueLabel, Value: jsonString(SentinelQueue)},
		KnobKueueQueue:            {Key: vocab.KueueQueueLabel, Value: jsonString(SentinelKueueQueue)},
		KnobPriorityClassName:     {Key: "priorityClassName", Value: jsonString(SentinelPriorityClass)},
		KnobWorkloadPriorityClass: {Key: vocab.KueuePriorityClassLabel, Value: jsonString(SentinelWorkloadPriority)},
		KnobSuspend:               {Key: "suspend", Value: "true"},
		KnobTTL:                   {Key: "ttlSecondsAfterFinished", Value: strconv.FormatInt(SentinelTTL, 10)},
	},
	KueueQueue:        FieldSentinel{Key: vocab.KueueQueueLabel, Value: jsonString(SentinelQueue)},
	KueueQueuePattern: dns1123Sub,
	NodeSelector:      pairText(SentinelNodeKey, SentinelNodeValue),
	Toleration:        tolerationJSON(sentinelToleration),
	Env:               envJSON(SentinelEnvName, SentinelEnvValue),
}

var sentinelToleration = profile.Toleration{Key: SentinelTolerationKey, Operator: "Exists", Effect: "NoSchedule"}

// sentinelKnobs sets every knob to its sentinel.
func sentinelKnobs() Knobs {
	t := true
	ttl := SentinelTTL
	return Knobs{
		Queue: SentinelQueue, KueueQueue: SentinelKueueQueue, PriorityClassName: SentinelPriorityClass, WorkloadPriorityClass: SentinelWorkloadPriority,
		NodeSelector: map[string]string{SentinelNodeKey: SentinelNodeValue},
		Tolerations:  []profile.Toleration{sentinelToleration},
		Env:          map[string]string{SentinelEnvName: SentinelEnvValue},
		Suspend:      &t, TTL: &ttl,
	}
}

func (k Knobs) empty() bool {
	return k.Queue == "" && k.KueueQueue == "" && k.PriorityClassName == "" && k.WorkloadPriorityClass == "" && len(k.NodeSelector) == 0 && len(k.Tolerations) == 0 &&
		len(k.Env) == 0 && k.Suspend == nil && k.TTL == nil
}

// only keeps the knobs named in names.
func (k Knobs) only(names map[string]bool) Knobs {
	var out Knobs
	if names[KnobQueue] {
		out.Queue = k.Queue
	}
	if names[KnobKueueQueue] {
		out.KueueQueue = k.KueueQueue
	}
	if names[KnobPriorityClassName] {
		out.PriorityClassName = k.PriorityClassName
	}
	if names[KnobWorkloadPriorityClass] {
		out.WorkloadPriorityClass = k.WorkloadPriorityClass
	}
	if names[KnobNodeSelector] {
		out.NodeSelector = k.NodeSelector
	}
	if names[KnobTolerations] {
		out.Tolerations = k.Tolerations
	}
	if names[KnobEnv] {
		out.Env = k.Env
	}
	if names[KnobSuspend] {
		out.Suspend = k.Suspend
	}
	if names[KnobTTL] {
		out.TTL = k.TTL
	}
	return out
}

// KnobOverrides are the nrl-k8s render infra overrides that mean k for a
// run of the profile in (the profile as loaded, without k): scalars set
// their key; nodeSelector, tolerations and env are the profile's with k's
// added, since an override replaces a whole mapping or list.
func KnobOverrides(in *profile.Infra, k Knobs) []string {
	var out []string
	if k.Queue != "" {
		out = append(out, "infra.scheduler.queue="+jsonString(k.Queue))
	}
	if k.KueueQueue != "" {
		out = append(out, "infra.scheduler.kueue.queue="+jsonString(k.KueueQueue))
	}
	if k.PriorityClassName != "" {
		out = append(out, "infra.scheduler.priorityClassName="+jsonString(k.PriorityClassName))
	}
	if k.WorkloadPriorityClass != "" {
		key := registry.AdmissionKeys(in.Scheduler.View()).PriorityClass
		out = append(out, "infra."+key+"="+jsonString(k.WorkloadPriorityClass))
	}
	if len(k.NodeSelector) > 0 {
		m := map[string]string{}
		for key, v := range in.Placement.NodeSelector {
			m[key] = v
		}
		for key, v := range k.NodeSelector {
			m[key] = v
		}
		b, _ := json.Marshal(m)
		out = append(out, "infra.placement.nodeSelector="+string(b))
	}
	if len(k.Tolerations) > 0 {
		list := append(append([]profile.Toleration(nil), in.Placement.Tolerations...), k.Tolerations...)
		b, _ := json.Marshal(list)
		out = append(out, "infra.placement.tolerations="+string(b))
	}
	if len(k.Env) > 0 {
		m := map[string]string{}
		for key, v := range in.Env {
			m[key] = v
		}
		for key, v := range k.Env {
			m[key] = v
		}
		b, _ := json.Marshal(m)
		out = append(out, "infra.env="+string(b))
	}
	if k.Suspend != nil {
		out = append(out, "infra.launch.rayjob.suspend="+strconv.FormatBool(*k.Suspend))
	}
	if k.TTL != nil {
		out = append(out, "infra.launch.rayjob.ttlSecondsAfterFinished="+strconv.FormatInt(*k.TTL, 10))
	}
	return out
}

// KnobDefaults are the profile's own values of the scalar knobs: what the
// chart puts in place of a sentinel when the value is not set.
type KnobDefaults struct {
	Queue string `json:"queue"`
	// KueueQueue is the profile's scheduler.kueue.queue (KAI places, Kueue
	// admits); "" for any other profile.
	KueueQueue        string `json:"kueueQueue,omitempty"`
	PriorityClassName string `json:"priorityClassName"`
	// WorkloadPriorityClass is the profile's (Kueue's, whichever way the
	// profile names Kueue): "" leaves the label out.
	WorkloadPriorityClass string `json:"workloadPriorityClass"`
	Suspend               bool   `json:"suspend"`
	TTL                   int64  `json:"ttlSecondsAfterFinished"`
}

func knobDefaults(in *profile.Infra) KnobDefaults {
	d := KnobDefaults{Suspend: in.Launch.RayJob.Suspend, TTL: int64(in.Launch.RayJob.TTLSecondsAfterFinished)}
	if in.Scheduler.Queue != nil {
		d.Queue = *in.Scheduler.Queue
	}
	if in.Scheduler.PriorityClassName != nil {
		d.PriorityClassName = *in.Scheduler.PriorityClassName
	}
	if _, pc, ok := in.Scheduler.KueueAdmission(); ok && pc != nil {
		d.WorkloadPriorityClass = *pc
	}
	if kueueBesideKAI(in) {
		d.KueueQueue = in.Scheduler.Kueue.Queue
	}
	return d
}

// kueueBesideKAI: Kueue admits beside KAI's placement, so Kueue's keys are
// scheduler.kueue's.
func kueueBesideKAI(in *profile.Infra) bool {
	return registry.AdmissionKeys(in.Scheduler.View()).Beside
}

// kueueAlone: scheduler.kind selects Kueue, which admits alone.
func kueueAlone(in *profile.Infra) bool { return registry.AdmissionKeys(in.Scheduler.View()).Selected }

// noKueueQueue says why a profile takes no kueueQueue value, "" when it
// does: it is Kueue's queue beside KAI's only. On a KAI profile without
// scheduler.kueue the override would add Kueue's admission, which is the
// profile's choice (its team's quota), not a release's.
func noKueueQueue(in *profile.Infra) string {
	switch {
	case kueueBesideKAI(in):
		return ""
	case kueueAlone(in):
		return "the profile names Kueue alone (scheduler.kind kueue): its LocalQueue is the queue value"
	}
	return fmt.Sprintf("the profile has no scheduler.kueue (scheduler.kind is %s): kueueQueue is Kueue's LocalQueue where KAI places and Kueue admits, and whether Kueue admits the run is the profile's choice", in.Scheduler.Kind)
}

// unavailableWhy says why a knob changes nothing in a render, as the
// chart's error reports it.
func unavailableWhy(knob string, mode runparams.Mode, in *profile.Infra) string {
	switch knob {
	case KnobQueue:
		if s, ok := registry.Of(in.Scheduler.Kind); !ok || !s.NeedsQueue() {
			return fmt.Sprintf("the profile queues with neither KAI nor Kueue (scheduler.kind is %s); a queue needs scheduler: {kind: kai or kueue, queue: ...} in the profile", in.Scheduler.Kind)
		}
		return fmt.Sprintf("%s mode renders nothing KAI schedules or Kueue admits", mode)
	case KnobKueueQueue, KnobWorkloadPriorityClass:
		return fmt.Sprintf("%s mode renders nothing Kueue admits", mode)
	case KnobSuspend, KnobTTL:
		return fmt.Sprintf("it is a field of the RayJob that creates the run's cluster, which only rayjob mode renders (mode is %s)", mode)
	case KnobPriorityClassName, KnobEnv:
		return fmt.Sprintf("it goes to the run's Ray pods, and %s mode renders none", mode)
	case KnobNodeSelector, KnobTolerations:
		return fmt.Sprintf("it goes to the GPU workers (as placement does), and %s mode of this profile renders none", mode)
	}
	return "it changes nothing in the rendered objects"
}

// tolerationJSON is a toleration as the engine renders it (corev1's
// omitempty fields, keys sorted) and as the chart writes it with toJson.
func tolerationJSON(t profile.Toleration) string {
	m := map[string]any{"key": t.Key, "operator": t.Operator, "effect": t.Effect}
	if t.Value != nil && *t.Value != "" {
		m["value"] = *t.Value
	}
	if t.TolerationSeconds != nil {
		m["tolerationSeconds"] = int64(*t.TolerationSeconds)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// envJSON is one variable as the engine renders it.
func envJSON(name, value string) string {
	m := map[string]string{"name": name}
	if value != "" {
		m["value"] = value
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// substituteField puts a scalar knob's value (JSON text; "" removes the
// field) in place of its sentinel field.
func substituteField(data string, f FieldSentinel, value string) string {
	tok := f.Token()
	if value == "" {
		data = strings.ReplaceAll(data, tok+",", "")
		return strings.ReplaceAll(data, ","+tok, "")
	}
	return strings.ReplaceAll(data, tok, jsonString(f.Key)+":"+value)
}

// substituteElements puts list elements (JSON texts) in place of the
// sentinel element; without any, the element goes, and a list it was alone
// in goes too, as the engine omits empty lists.
func substituteElements(data, sentinel, field string, elems []string) string {
	if len(elems) == 0 {
		data = strings.ReplaceAll(data, `"`+field+`":[`+sentinel+`],`, "")
		data = strings.ReplaceAll(data, `,"`+field+`":[`+sentinel+`]`, "")
		data = strings.ReplaceAll(data, ","+sentinel, "")
		return strings.ReplaceAll(data, sentinel+",", "")
	}
	return strings.ReplaceAll(data, sentinel, strings.Join(elems, ","))
}

// substituteKnobs is the chart's knob substitution ("nemo-rl-run.knobs").
func substituteKnobs(data string, rm *RenderMeta, d KnobDefaults, k Knobs) string {
	avail := func(n string) bool { _, no := rm.Unavailable[n]; return !no }
	fs := knobSentinels.Fields
	if avail(KnobQueue) {
		q := k.Queue
		if q == "" {
			q = d.Queue
		}
		data = substituteField(data, fs[KnobQueue], jsonString(q))
		data = substituteField(data, knobSentinels.KueueQueue, jsonString(q))
	}
	if avail(KnobKueueQueue) {
		q := k.KueueQueue
		if q == "" {
			q = d.KueueQueue
		}
		data = substituteField(data, fs[KnobKueueQueue], jsonString(q))
	}
	if avail(KnobPriorityClassName) {
		data = substituteField(data, fs[KnobPriorityClassName], optionalField(k.PriorityClassName, d.PriorityClassName))
	}
	if avail(KnobWorkloadPriorityClass) {
		data = substituteField(data, fs[KnobWorkloadPriorityClass], optionalField(k.WorkloadPriorityClass, d.WorkloadPriorityClass))
	}
	if avail(KnobNodeSelector) {
		data = substitutePairs(data, knobSentinels.NodeSelector, KnobNodeSelector, k.NodeSelector)
	}
	if avail(KnobTolerations) {
		var elems []string
		for _, t := range k.Tolerations {
			elems = append(elems, tolerationJSON(t))
		}
		data = substituteElements(data, knobSentinels.Toleration, KnobTolerations, elems)
	}
	if avail(KnobEnv) {
		var elems []string
		for _, n := range tree.SortedKeys(k.Env) {
			elems = append(elems, envJSON(n, k.Env[n]))
		}
		data = substituteElements(data, knobSentinels.Env, KnobEnv, elems)
	}
	if avail(KnobSuspend) {
		s := d.Suspend
		if k.Suspend != nil {
			s = *k.Suspend
		}
		v := ""
		if s {
			v = "true"
		}
		data = substituteField(data, fs[KnobSuspend], v)
	}
	if avail(KnobTTL) {
		ttl := d.TTL
		if k.TTL != nil {
			ttl = *k.TTL
		}
		v := ""
		if ttl != 0 {
			v = strconv.FormatInt(ttl, 10)
		}
		data = substituteField(data, fs[KnobTTL], v)
	}
	return data
}

// probeKnobs differ from the sentinels in length and sort order, with keys
// on both sides of the sentinel keys, text JSON must escape, and a
// toleration with every field.
func probeKnobs() Knobs {
	f := false
	ttl := int64(60)
	v := "probe-v"
	secs := profile.Int(30)
	return Knobs{
		Queue: "probe-queue", KueueQueue: "probe-kueue.lq-long", PriorityClassName: "probe.prio", WorkloadPriorityClass: "probe.wpc-long",
		NodeSelector: map[string]string{"a.probe/pool": "p1", "zz-probe": "p2"},
		Tolerations: []profile.Toleration{
			{Key: "probe/t", Operator: "Equal", Value: &v, Effect: "NoExecute", TolerationSeconds: &secs},
			{Key: "a-probe", Operator: "Exists", Effect: "PreferNoSchedule"},
		},
		Env:     map[string]string{"A_PROBE": `x "y" <&>`, "ZZ_PROBE": "", "probe_lower": "1"},
		Suspend: &f, TTL: &ttl,
	}
}

// knobProbe2 is a second probe: the other values of the booleans and
// zero-like scalars (suspend on, TTL 0 removes the field).
func knobProbe2() Knobs {
	t := true
	zero := int64(0)
	return Knobs{Suspend: &t, TTL: &zero}
}

// Taken is what the pods a knob goes to already carry, found next to the
// knob's sentinel in the rendered data: the chart refuses a value the
// engine would refuse or merge (a node selector key with another value, a
// variable a container sets, a toleration a worker has: the engine keeps
// one copy, a substitution would add a second).
type Taken struct {
	// NodeSelector: each key of a GPU worker's nodeSelector, with its values.
	NodeSelector map[string][]string `json:"nodeSelector"`
	// Tolerations: the GPU workers' tolerations, as JSON.
	Tolerations []string `json:"tolerations"`
	// Env: the names the Ray pods' containers set.
	Env []string `json:"env"`
}

func taken(docs []rendered.Doc) Taken {
	t := Taken{NodeSelector: map[string][]string{}, Tolerations: []string{}, Env: []string{}}
	ns := map[string]map[string]bool{}
	tols, env := map[string]bool{}, map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if sel, ok := x[KnobNodeSelector].(map[string]any); ok && sel[SentinelNodeKey] != nil {
				for k, val := range sel {
					if k != SentinelNodeKey {
						if ns[k] == nil {
							ns[k] = map[string]bool{}
						}
						ns[k][fmt.Sprint(val)] = true
					}
				}
			}
			if list, ok := x[KnobTolerations].([]any); ok && containsJSON(list, knobSentinels.Toleration) {
				for _, el := range list {
					if j := canonicalJSON(el); j != knobSentinels.Toleration {
						tols[j] = true
					}
				}
			}
			if list, ok := x[KnobEnv].([]any); ok && containsJSON(list, knobSentinels.Env) {
				for _, el := range list {
					if e, ok := el.(map[string]any); ok && e["name"] != SentinelEnvName {
						env[fmt.Sprint(e["name"])] = true
					}
				}
			}
			for _, k := range tree.SortedKeys(x) {
				walk(x[k])
			}
		case []any:
			for _, el := range x {
				walk(el)
			}
		}
	}
	for _, d := range docs {
		walk(d.Data)
	}
	for _, k := range tree.SortedKeys(ns) {
		t.NodeSelector[k] = tree.SortedKeys(ns[k])
	}
	t.Tolerations = tree.SortedKeys(tols)
	t.Env = tree.SortedKeys(env)
	return t
}

func canonicalJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func containsJSON(list []any, want string) bool {
	for _, el := range list {
		if canonicalJSON(el) == want {
			return true
		}
	}
	return false
}

// MaxTTL is the largest ttlSecondsAfterFinished (RayJob's field is an
// int32).
const MaxTTL = math.MaxInt32

// optionalField is a field that is written only when set: the release's
// value, else the profile's; "" when neither sets it (the field is left out).
func optionalField(value, profileDefault string) string {
	if value == "" {
		value = profileDefault
	}
	if value == "" {
		return ""
	}
	return jsonString(value)
}
