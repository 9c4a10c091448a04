// Package review reads two renders (files or trees) and says, in a few
// lines a reviewer reads in seconds, what a change costs: GPUs and nodes per
// run, images, objects added or removed, DRA claims, scheduler queue and
// topology, and entrypoint changes as a line diff.
package review

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Facts are what a reviewer of one run cares about.
type Facts struct {
	Run     string
	Objects []string // "Kind/name", sorted
	Nodes   int64    // GPU worker pods × hosts
	GPUs    int64
	Images  []string // sorted, unique
	// DRA lists claims and DRA objects as readable lines, sorted.
	DRA []string
	// Scheduler lists schedulerName, queue and topology settings, sorted.
	Scheduler []string
	// Entrypoints by RayJob name.
	Entrypoints map[string]string
}

// Load reads a render: a file (one run, named after the file) or a tree
// (every *.yaml below it, one run per file).
func Load(path string) (map[string]*Facts, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	out := map[string]*Facts{}
	if !st.IsDir() {
		f, err := loadFile(path)
		if err != nil {
			return nil, err
		}
		out[f.Run] = f
		return out, nil
	}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		f, err := loadFile(p)
		if err != nil {
			return err
		}
		out[f.Run] = f
		return nil
	})
	return out, err
}

func loadFile(path string) (*Facts, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	name := strings.TrimSuffix(filepath.Base(path), ".yaml")
	f, err := Parse(name, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse reads one run's multi-document render.
func Parse(run string, data []byte) (*Facts, error) {
	f := &Facts{Run: run, Entrypoints: map[string]string{}}
	images := map[string]bool{}
	for i, doc := range splitDocs(data) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if head.Kind == "" {
			return nil, fmt.Errorf("document %d: no kind; expected a Kubernetes object", i+1)
		}
		f.Objects = append(f.Objects, head.Kind+"/"+head.Metadata.Name)
		switch head.Kind {
		case "RayJob":
			var j rayv1.RayJob
			if err := yaml.Unmarshal(doc, &j); err != nil {
				return nil, fmt.Errorf("RayJob %s: %w", j.Name, err)
			}
			f.Entrypoints[j.Name] = j.Spec.Entrypoint
			if j.Spec.RayClusterSpec != nil {
				f.cluster("RayJob/"+j.Name, j.Labels, j.Spec.RayClusterSpec, images)
			}
			if c := j.Spec.ClusterSelector["ray.io/cluster"]; c != "" {
				f.Scheduler = append(f.Scheduler, fmt.Sprintf("RayJob/%s submits to %s", j.Name, c))
			}
		case "RayCluster":
			var c rayv1.RayCluster
			if err := yaml.Unmarshal(doc, &c); err != nil {
				return nil, fmt.Errorf("RayCluster %s: %w", c.Name, err)
			}
			f.cluster("RayCluster/"+c.Name, c.Labels, &c.Spec, images)
		case "ComputeDomain":
			var cd struct {
				Spec struct {
					NumNodes int64 `json:"numNodes"`
				} `json:"spec"`
			}
			_ = yaml.Unmarshal(doc, &cd)
			f.DRA = append(f.DRA, fmt.Sprintf("ComputeDomain/%s numNodes=%d", head.Metadata.Name, cd.Spec.NumNodes))
		case "ResourceClaimTemplate":
			var rct struct {
				Spec struct {
					Spec struct {
						Devices struct {
							Requests []struct {
								Name    string `json:"name"`
								Exactly struct {
									Count           int64  `json:"count"`
									DeviceClassName string `json:"deviceClassName"`
								} `json:"exactly"`
							} `json:"requests"`
						} `json:"devices"`
					} `json:"spec"`
				} `json:"spec"`
			}
			_ = yaml.Unmarshal(doc, &rct)
			for _, r := range rct.Spec.Spec.Devices.Requests {
				f.DRA = append(f.DRA, fmt.Sprintf("ResourceClaimTemplate/%s %s: %d × %s", head.Metadata.Name, r.Name, r.Exactly.Count, r.Exactly.DeviceClassName))
			}
		case "Deployment", "Pod":
			var pt struct {
				Spec struct {
					Containers []corev1.Container `json:"containers"`
					Template   struct {
						Spec corev1.PodSpec `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			}
			if err := yaml.Unmarshal(doc, &pt); err != nil {
				return nil, fmt.Errorf("%s %s: %w", head.Kind, head.Metadata.Name, err)
			}
			for _, c := range append(pt.Spec.Containers, pt.Spec.Template.Spec.Containers...) {
				images[c.Image] = true
			}
		}
	}
	for im := range images {
		if im != "" {
			f.Images = append(f.Images, im)
		}
	}
	sort.Strings(f.Images)
	sort.Strings(f.Objects)
	sort.Strings(f.DRA)
	sort.Strings(f.Scheduler)
	return f, nil
}

// cluster adds a RayCluster spec's nodes, GPUs, images, claims and KAI fields.
func (f *Facts) cluster(owner string, labels map[string]string, spec *rayv1.RayClusterSpec, images map[string]bool) {
	if q := labels["kai.scheduler/queue"]; q != "" {
		f.Scheduler = append(f.Scheduler, fmt.Sprintf("%s queue=%s", owner, q))
	}
	pods := []struct {
		group string
		n     int64
		t     corev1.PodTemplateSpec
	}{{"head", 1, spec.HeadGroupSpec.Template}}
	for _, g := range spec.WorkerGroupSpecs {
		n := int64(0)
		if g.Replicas != nil {
			n = int64(*g.Replicas)
		}
		hosts := int64(g.NumOfHosts)
		if hosts < 1 {
			hosts = 1
		}
		pods = append(pods, struct {
			group string
			n     int64
			t     corev1.PodTemplateSpec
		}{g.GroupName, n * hosts, g.Template})
	}
	sched := map[string]bool{}
	for _, p := range pods {
		var gpus int64
		for _, c := range p.t.Spec.Containers {
			images[c.Image] = true
			q, ok := c.Resources.Limits["nvidia.com/gpu"]
			if !ok {
				q, ok = c.Resources.Requests["nvidia.com/gpu"]
			}
			if ok {
				gpus += q.Value()
			}
		}
		if gpus > 0 {
			f.Nodes += p.n
			f.GPUs += gpus * p.n
		}
		for _, rc := range p.t.Spec.ResourceClaims {
			tpl := ""
			if rc.ResourceClaimTemplateName != nil {
				tpl = *rc.ResourceClaimTemplateName
			}
			sched[fmt.Sprintf("claim %s -> %s", rc.Name, tpl)] = true
		}
		if s := p.t.Spec.SchedulerName; s != "" {
			sched["schedulerName="+s] = true
		}
		for _, k := range []string{"kai.scheduler/topology", "kai.scheduler/topology-required-placement"} {
			if v := p.t.Annotations[k]; v != "" {
				sched[k+"="+v] = true
			}
		}
	}
	for k := range sched {
		if strings.HasPrefix(k, "claim ") {
			f.DRA = append(f.DRA, owner+" "+k)
		} else {
			f.Scheduler = append(f.Scheduler, owner+" "+k)
		}
	}
}

func splitDocs(data []byte) [][]byte {
	var out [][]byte
	for _, part := range bytes.Split(append([]byte("\n"), data...), []byte("\n---\n")) {
		if len(bytes.TrimSpace(part)) > 0 {
			out = append(out, part)
		}
	}
	return out
}
