package preflight

import (
	"context"
	"fmt"
	"sort"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/prereq"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
)

// ClaimRequest is one device request of a rendered ResourceClaimTemplate:
// every pod claiming from the template asks Count devices of Class.
type ClaimRequest struct {
	Namespace, Template, Request, Class string
	Count                               int64
	// channel: a ComputeDomain's channel template, which preflight counts
	// in placement and has no Devices line of its own.
	channel bool
}

// ClaimRequests lists the exact-count device requests of the rendered
// ResourceClaimTemplates (the RoCE, InfiniBand and GPU claims).
func ClaimRequests(docs []rendered.Doc) ([]ClaimRequest, error) {
	var out []ClaimRequest
	for _, d := range docs {
		if d.Kind == "ComputeDomain" {
			// NVIDIA's driver makes the channel template the ComputeDomain
			// names: one channel device per pod.
			if name, _, _ := unstructured.NestedString(d.Data, "spec", "channel", "resourceClaimTemplate", "name"); name != "" {
				out = append(out, ClaimRequest{Namespace: d.Namespace, Template: name, Request: "channel", Class: prereq.ComputeDomainChannelClass, Count: 1, channel: true})
			}
			continue
		}
		if d.Kind != "ResourceClaimTemplate" {
			continue
		}
		var t resourcev1.ResourceClaimTemplate
		if err := fromData(d, &t); err != nil {
			return nil, err
		}
		for _, r := range t.Spec.Spec.Devices.Requests {
			if r.Exactly == nil || r.Exactly.AllocationMode == resourcev1.DeviceAllocationModeAll {
				continue
			}
			n := r.Exactly.Count
			if n == 0 {
				n = 1 // the API's default for ExactCount
			}
			out = append(out, ClaimRequest{Namespace: d.Namespace, Template: t.Name, Request: r.Name, Class: r.Exactly.DeviceClassName, Count: n})
		}
	}
	return out, nil
}

// deviceLines compares each claim request with the devices the cluster's
// DRA drivers publish (ResourceSlices): the most devices of the request's
// class any one node has. A pod claims its devices on its own node, so a
// request for more than any node has is never allocated (the scheduler:
// "cannot allocate all claims"), however many nodes there are. A device
// matches the class when its driver is the one the class's selectors name
// (`device.driver == "..."`, what NVIDIA's and the NIC drivers' classes
// say); a class with any other selector is "cannot tell": evaluating CEL
// here would link DRA's CEL compiler into every nrl-k8s process, whose
// package init the startup budget (tests/startup) does not allow.
func deviceLines(ctx context.Context, c *kube.Conn, reqs []ClaimRequest) ([]Line, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	slices, out, err := c.List(ctx, kube.ResourceSlices, "", "")
	if kube.Stops(err) {
		return nil, err
	}
	var lines []Line
	for _, r := range reqs {
		if r.channel {
			continue
		}
		l := Line{Need: Need{Kind: "Devices", APIVersion: vocab.DRAAPIVersion, Name: r.Template + " " + r.Request,
			Why: fmt.Sprintf("each pod claims %d device(s) of class %s on its node", r.Count, r.Class)}}
		if out != kube.Found {
			l.State, l.Detail = verdict(out, err)
			lines = append(lines, l)
			continue
		}
		most, node, detail, err := mostPerNode(ctx, c, slices, r.Class)
		if kube.Stops(err) {
			return nil, err
		}
		switch {
		case detail != "":
			l.State, l.Detail = CannotTell, detail
		case most >= r.Count:
			l.State, l.Detail = OK, fmt.Sprintf("node %s publishes %d", node, most)
		default:
			l.State = Missing
			l.Detail = fmt.Sprintf("no node publishes %d: the most on one node is %d; the pods stay Pending (\"cannot allocate all claims\"); set the claim's count to the devices a node has (dra.roce.count / dra.infiniband.count)", r.Count, most)
		}
		lines = append(lines, l)
	}
	return lines, nil
}

// mostPerNode is the most devices of class one node's slices publish, and
// that node; detail says why it cannot be told.
func mostPerNode(ctx context.Context, c *kube.Conn, items []unstructured.Unstructured, class string) (int64, string, string, error) {
	u, out, err := c.Get(ctx, kube.DeviceClasses, "", class)
	if out != kube.Found {
		state, d := verdict(out, err)
		return 0, "", fmt.Sprintf("DeviceClass %s: %s %s", class, state, d), err
	}
	var dc resourcev1.DeviceClass
	if err := kube.Decode(u, &dc); err != nil {
		return 0, "", "DeviceClass " + class + ": " + err.Error(), nil
	}
	driver, bad := driverOf(&dc)
	if bad >= 0 {
		return 0, "", fmt.Sprintf("DeviceClass %s selectors[%d]: not a device.driver == \"...\" selector; not evaluated", class, bad), nil
	}
	perNode := map[string]int64{}
	for i := range items {
		var s resourcev1.ResourceSlice
		if kube.Decode(&items[i], &s) != nil || s.Spec.NodeName == nil || *s.Spec.NodeName == "" {
			continue // a slice for many nodes (a network-attached pool) is not one node's
		}
		if driver == "" || s.Spec.Driver == driver {
			perNode[*s.Spec.NodeName] += int64(len(s.Spec.Devices))
		}
	}
	nodes := make([]string, 0, len(perNode))
	for n := range perNode {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	var most int64
	var node string
	for _, n := range nodes {
		if perNode[n] > most {
			most, node = perNode[n], n
		}
	}
	return most, node, "", nil
}

// driverSelectorRE is a selector naming one driver.
var driverSelectorRE = lazyre.New(`^device\.driver\s*==\s*(?:"([^"]+)"|'([^']+)')$`)

func exprOf(s resourcev1.DeviceSelector) string {
	if s.CEL == nil {
		return ""
	}
	return s.CEL.Expression
}
