package preflight

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/placement"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// placementLines places every run of the input on the cluster's nodes, one
// run after another, with fn/analyse/placement (the scheduler's filters,
// DRA devices per node, KAI's gangs), on what the pods already bound and
// the ResourceClaims already allocated leave: one line per pod group, and
// one per run the scheduler would leave partly placed or waiting.
func placementLines(ctx context.Context, c *kube.Conn, in Input, k *cache) ([]Line, error) {
	all := k.nodesOf(ctx, c)
	if kube.Stops(all.err) {
		return nil, all.err
	}
	if all.out != kube.Found {
		l := Line{Need: Need{Kind: "Nodes", APIVersion: "v1", Name: "(all)", Why: "where the run's pods go"}}
		l.State, l.Detail = verdict(all.out, all.err)
		return []Line{l}, nil
	}
	f, ahead, g, err := fleetOf(ctx, c, k)
	if err != nil {
		return nil, err
	}
	admitted, err := registry.PreflightAdmit(ctx, reader{c, k}, in.run())
	if err != nil {
		return nil, err
	}
	in.Pods = admitted
	runs, shapes := runsOf(in)
	results := f.Place(append(ahead, runs...))[len(ahead):]
	several := len(in.Spaces) > 1
	var lines []Line
	for i, r := range runs {
		for j, s := range r.Shapes {
			lines = append(lines, shapeLine(shapes[i][j], s, results[i].Waits, results[i].Shapes[j], all.bad, g, several))
		}
	}
	for i, r := range runs {
		queued := len(shapes[i]) > 0 && in.Queues[shapes[i][0].Namespace+"/"+shapes[i][0].Object] != ""
		if l, ok := runLine(r, results[i], shapes[i], several, queued); ok {
			l.Detail += unreachable(f, r)
			lines = append(lines, blindTo(l, runBlind(g, shapes[i])))
		}
	}
	return lines, nil
}

// shapeLine is one pod group's line, in the words preflight has always
// used: all placed, or how many and why the rest fit no node.
func shapeLine(ps PodShape, s placement.Shape, waits bool, res placement.Result, bad []string, g gaps, several bool) Line {
	l := Line{Need: Need{Kind: "Nodes", APIVersion: "v1", Name: ps.Name(),
		Why: fmt.Sprintf("%d pod(s) requesting %s", s.Count, requestText(s.Requests, s.Claims))}}
	if several {
		l.Namespace = ps.Namespace
	}
	l.State, l.Detail = OK, fmt.Sprintf("all %d placed on the nodes, with every other pod of the input", s.Count)
	switch {
	case res.Placed < s.Count && waits && res.Fit >= s.Count:
		l.State = Missing
		l.Detail = fmt.Sprintf("0 of %d placed: they fit, but KAI places the run's gang all or nothing and the rest of it does not", s.Count)
	case res.Placed < s.Count:
		l.State = Missing
		l.Detail = fmt.Sprintf("%d of %d placed with every other pod of the input; the rest fit no node: %s", res.Placed, s.Count, reasons(res.Why))
		if waits {
			l.Detail = fmt.Sprintf("0 of %d placed: KAI places the run's gang all or nothing, and %d fit%s: %s", s.Count, res.Fit, inDomain(s.Required), reasons(res.Why))
		}
	}
	if ps.Kueue != "" && (l.State == Missing || ps.KueueRefuses) {
		l.State = Missing
		l.Detail += "; " + ps.Kueue
		if !ps.KueueRefuses {
			l.Detail += ": no node has both; expected a flavor whose nodeLabels the pod set's nodes carry listed first for its resources (e.g. a CPU flavor covering cpu and memory for the head), or those labels off the flavor"
		}
	}
	if len(bad) > 0 {
		// The nodes left out may hold what the rest needs, or not.
		if l.State == Missing {
			l.State = CannotTell
		}
		l.Detail += "; " + leftOut(bad)
	}
	if len(g.notes) > 0 {
		if l.State == OK {
			l.State = CannotTell
		}
		l.Detail += "; " + strings.Join(g.notes, "; ")
	} else {
		l.Detail += " (after the pods already bound, the pods waiting ahead of it and the DRA devices already allocated)"
	}
	return blindTo(l, runBlind(g, []PodShape{ps}))
}

// runBlind is every failed read that leaves the pods' placement unknown
// either way: the fleet's devices, and the Kueue objects that say how
// Kueue changes a pod set it admits.
func runBlind(g gaps, shapes []PodShape) []string {
	out := append([]string(nil), g.blind...)
	seen := map[string]bool{}
	for _, ps := range shapes {
		if ps.KueueUnread != "" && !seen[ps.KueueUnread] {
			seen[ps.KueueUnread] = true
			out = append(out, ps.KueueUnread)
		}
	}
	return out
}

// blindTo makes a line "cannot tell", never "ok" nor "missing", when a
// read its verdict rests on failed, naming each.
func blindTo(l Line, blind []string) Line {
	if len(blind) == 0 {
		return l
	}
	l.State = CannotTell
	l.Detail = "cannot tell where the pods go: " + strings.Join(blind, "; ") + "; as far as the rest was read: " + l.Detail
	return l
}

func inDomain(key string) string {
	if key == "" {
		return ""
	}
	return " in one " + key
}

// runLine is what the scheduler does with a run that does not fit whole:
// KAI's gang waits, holding nothing; the default scheduler binds what fits
// and the bound pods hold their GPUs while the rest (maybe the head) wait.
func runLine(r placement.Run, res placement.RunResult, shapes []PodShape, several, queued bool) (Line, bool) {
	placed, total := res.Placed(r)
	if !res.Waits && (placed == total || r.Gang) {
		// A gang KAI started has its minimum; the rest join as room frees.
		return Line{}, false
	}
	fit := int64(0)
	for _, s := range res.Shapes {
		fit += s.Fit
	}
	l := Line{Need: Need{Kind: "Run", APIVersion: "v1", Name: r.Name}, State: Missing}
	if several && len(shapes) > 0 {
		l.Namespace = shapes[0].Namespace
	}
	if res.Waits {
		l.Why = "KAI places its pods as one gang"
		where := ""
		if r.Required != "" {
			where = " in one " + r.Required + " domain"
		}
		l.Detail = fmt.Sprintf("the gang needs its %d pods placed together%s and at most %d fit: KAI places none, and the run waits, holding no GPU, until the fleet frees room; the fleet would need room for the %d pods%s", total, where, fit, total, where)
		return l, true
	}
	l.Why = "its scheduler places the pods one by one, no gang"
	gpus := res.Held(r, capacity.GPUResource)
	l.Detail = fmt.Sprintf("%d of %d pods placed: the placed pods hold %d %s idle while the rest wait", placed, total, gpus, capacity.GPUResource)
	if gpus == 0 {
		l.Detail = fmt.Sprintf("%d of %d pods placed, holding no GPU, while the rest wait", placed, total)
	}
	for j, s := range res.Shapes {
		if shapes[j].Role == "head" && s.Placed == 0 && placed > 0 {
			l.Detail = fmt.Sprintf("the head cannot be placed while its %d placed worker pods hold %d %s idle: the run never starts until the head finds a node", placed, gpus, capacity.GPUResource)
		}
	}
	if queued {
		// Kueue admits the whole run against quota, then the scheduler
		// still binds its pods one by one.
		l.Detail += "; expected room for the whole run (Kueue's quota is not the nodes' room), or scheduler.kind: kai beside Kueue (one gang, all or nothing)"
	} else {
		l.Detail += "; expected room for the whole run, or scheduler.kind: kai (one gang, all or nothing) or a Kueue queue"
	}
	return l, true
}

// unreachable says which pod group of a waiting gang no node of its
// required level can hold at all (a CPU head under a run-wide
// nvidia.com/gpu.clique, which KAI's PodGroup constraint binds too).
func unreachable(f *placement.Fleet, r placement.Run) string {
	if !r.Gang || r.Required == "" {
		return ""
	}
	for _, s := range r.Shapes {
		if !f.Reaches(r.Required, s) {
			return fmt.Sprintf("; no node %s may use carries %s, and the run-wide required placement (%s) binds every pod of the gang, the head's included (fn/analyse/kai): KAI never places this run; expected the level required per worker group (on its pod template) instead, or %s's nodes in the domain", s.Name(), r.Required, vocab.KAIRequiredPlacementAnnotation, s.Name())
		}
	}
	return ""
}

// runsOf groups the input's pod groups into runs, one per object, in
// input order, as placement.RunsOf does for check too: a RayJob's or
// RayCluster's head and worker groups are KAI's gang when its pods name
// KAI, with the PodGroup's and each subgroup's required level; every other
// pod (a submitter, a Deployment's) is placed on its own.
func runsOf(in Input) ([]placement.Run, [][]PodShape) {
	all := make([]placement.Shape, len(in.Pods))
	for i, ps := range in.Pods {
		pod := ps.AsPod()
		all[i] = placement.Shape{Pod: ps.Pod, Requests: placement.PodRequests(pod), Claims: in.claimsOf(pod)}
		all[i].Requests[corev1.ResourcePods] = placement.Quantity(1)
	}
	runs, index := placement.RunsOf(all, in.Gangs)
	shapes := make([][]PodShape, len(runs))
	for i, at := range index {
		for _, k := range at {
			shapes[i] = append(shapes[i], in.Pods[k])
		}
	}
	return runs, shapes
}

// claimsOf is the devices, per DeviceClass, one pod claims from the
// input's ResourceClaimTemplates (and the ComputeDomain channel templates
// NVIDIA's driver makes); a claim shared by name is allocated once, for
// every pod, and is not counted per pod.
func (in Input) claimsOf(pod *corev1.Pod) map[string]int64 {
	out := map[string]int64{}
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName == nil {
			continue
		}
		for _, r := range in.Claims {
			if r.Template == *pc.ResourceClaimTemplateName && (r.Namespace == "" || r.Namespace == pod.Namespace) {
				out[r.Class] += r.Count
			}
		}
	}
	return out
}

func requestText(req corev1.ResourceList, claims map[string]int64) string {
	var parts []string
	for _, name := range sortedNames(req) {
		if name == corev1.ResourcePods {
			continue
		}
		q := req[name]
		parts = append(parts, string(name)+"="+q.String())
	}
	for _, class := range tree.SortedKeys(claims) {
		parts = append(parts, fmt.Sprintf("%d device(s) of class %s", claims[class], class))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}
