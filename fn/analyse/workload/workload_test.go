package workload_test

import (
	"strconv"
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
)

var restricted = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}

func clusterSpec() rayv1.RayClusterSpec {
	mount := corev1.VolumeMount{Name: "data", MountPath: "/data"}
	spec := rayv1.RayClusterSpec{WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "gpu"}}}
	spec.HeadGroupSpec.Template.Spec.Containers = []corev1.Container{{Name: "ray-head"}}
	spec.HeadGroupSpec.Template.Labels = map[string]string{"team": "rl", "ray.io/group": "mine", "app.kubernetes.io/name": "run"}
	spec.WorkerGroupSpecs[0].Template.Spec.Containers = []corev1.Container{{Name: "ray-worker", SecurityContext: restricted, VolumeMounts: []corev1.VolumeMount{mount}}}
	return spec
}

func rayCluster(name string, spec rayv1.RayClusterSpec) *rayv1.RayCluster {
	return &rayv1.RayCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       spec,
	}
}

func rayJob(mode rayv1.JobSubmissionMode, submitter *corev1.PodTemplateSpec) *rayv1.RayJob {
	spec := clusterSpec()
	return &rayv1.RayJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayJob"},
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns"},
		Spec:       rayv1.RayJobSpec{SubmissionMode: mode, RayClusterSpec: &spec, SubmitterPodTemplate: submitter},
	}
}

func pods(t *testing.T, objs ...any) []workload.Pod {
	t.Helper()
	os, err := workload.Objects(objs)
	require.NoError(t, err)
	ps, errs := workload.Pods(os)
	require.Empty(t, errs)
	return ps
}

type podShape struct {
	role, path, generateName string
	containers, init         []string
	injected                 []string // list/index/name<-from
}

func shape(p workload.Pod) podShape {
	s := podShape{role: p.Role, path: p.Path, generateName: p.GenerateName}
	for _, c := range p.Spec.Containers {
		s.containers = append(s.containers, c.Name)
	}
	for _, c := range p.Spec.InitContainers {
		s.init = append(s.init, c.Name)
	}
	for _, in := range p.Injected {
		s.injected = append(s.injected, in.List+"/"+string(rune('0'+in.Index))+"/"+in.Name+"<-"+in.From)
	}
	return s
}

// The pods KubeRay v1.5.0 creates for each object, with the containers it
// injects and where their settings come from.
func TestPods(t *testing.T) {
	head := func(cluster, path string, containers ...string) podShape {
		return podShape{role: "head", path: path + ".headGroupSpec.template", generateName: cluster + "-head-", containers: append([]string{"ray-head"}, containers...)}
	}
	worker := func(cluster, path string) podShape {
		gp := path + ".workerGroupSpecs[0].template"
		return podShape{
			role: "worker group gpu", path: gp, generateName: cluster + "-gpu-worker-",
			containers: []string{"ray-worker"}, init: []string{"wait-gcs-ready"},
			injected: []string{"initContainers/0/wait-gcs-ready<-" + gp + ".spec.containers[0]"},
		}
	}
	autoscaled := clusterSpec()
	autoscaled.EnableInTreeAutoscaling = ptr.To(true)
	autoscaled.AutoscalerOptions = &rayv1.AutoscalerOptions{SecurityContext: restricted}
	for _, tc := range []struct {
		name string
		obj  any
		want []podShape
	}{
		{"a RayCluster", rayCluster("rc", clusterSpec()), []podShape{head("rc", "spec"), worker("rc", "spec")}},
		{
			"an autoscaled RayCluster", rayCluster("rc", autoscaled),
			[]podShape{func() podShape {
				h := head("rc", "spec", "autoscaler")
				h.injected = []string{"containers/1/autoscaler<-spec.autoscalerOptions"}
				return h
			}(), worker("rc", "spec")},
		},
		{
			"a RayJob in K8sJobMode without a submitter template", rayJob("", nil),
			[]podShape{head("job-xxxxx", "spec.rayClusterSpec"), worker("job-xxxxx", "spec.rayClusterSpec"), {
				role: "submitter", path: "spec.submitterPodTemplate", containers: []string{"ray-job-submitter"},
				injected: []string{"containers/0/ray-job-submitter<-spec.submitterPodTemplate"},
			}},
		},
		{
			"a RayJob with its submitter template", rayJob(rayv1.K8sJobMode, &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "submit"}}}}),
			[]podShape{head("job-xxxxx", "spec.rayClusterSpec"), worker("job-xxxxx", "spec.rayClusterSpec"), {role: "submitter", path: "spec.submitterPodTemplate", containers: []string{"submit"}}},
		},
		{
			"a RayJob in SidecarMode", rayJob(rayv1.SidecarMode, nil),
			[]podShape{func() podShape {
				h := head("job-xxxxx", "spec.rayClusterSpec", "ray-job-submitter")
				h.injected = []string{"containers/1/ray-job-submitter<-spec.submissionMode"}
				return h
			}(), worker("job-xxxxx", "spec.rayClusterSpec")},
		},
		{"a RayJob in HTTPMode", rayJob(rayv1.HTTPMode, nil), []podShape{head("job-xxxxx", "spec.rayClusterSpec"), worker("job-xxxxx", "spec.rayClusterSpec")}},
		{
			"a Deployment, as data",
			map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d", "namespace": "ns"},
				"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "app"}}}}}},
			[]podShape{{role: "pod", path: "spec.template", containers: []string{"app"}}},
		},
		{"a Pod", map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{"containers": []any{map[string]any{"name": "dev"}}}}, []podShape{{role: "pod", containers: []string{"dev"}}}},
		{"a Service", map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "s"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []podShape
			for _, p := range pods(t, tc.obj) {
				got = append(got, shape(p))
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// KubeRay's labels win over the template's where KubeRay says they must;
// the injected init container copies the Ray container's securityContext
// and mounts.
func TestRayPodLabelsAndCopies(t *testing.T) {
	ps := pods(t, rayCluster("rc", clusterSpec()))
	require.Len(t, ps, 2)
	h := ps[0]
	require.Equal(t, "RayCluster/rc", h.Object)
	require.Equal(t, "ns", h.Namespace)
	require.Equal(t, "rl", h.Meta.Labels["team"])
	require.Equal(t, "headgroup", h.Meta.Labels["ray.io/group"], "ray.io/group cannot be overridden")
	require.Equal(t, "run", h.Meta.Labels["app.kubernetes.io/name"], "the template's app name stays")
	require.Equal(t, "rc-head", h.Meta.Labels["ray.io/identifier"])
	require.Equal(t, "head", h.Meta.Labels["ray.io/node-type"])

	w := ps[1]
	require.Equal(t, "kuberay", w.Meta.Labels["app.kubernetes.io/name"])
	init := w.Spec.InitContainers[0]
	require.Equal(t, restricted, init.SecurityContext)
	require.NotSame(t, restricted, init.SecurityContext, "a copy, not the template's")
	require.Equal(t, w.Spec.Containers[0].VolumeMounts, init.VolumeMounts)
	in, ok := w.InjectedAt("initContainers", 0)
	require.True(t, ok)
	require.True(t, in.FromContainer)
	_, ok = w.InjectedAt("containers", 0)
	require.False(t, ok, "the Ray container is the template's")
	require.Equal(t, "spec.workerGroupSpecs[0].template.spec", w.SpecPath())

	// The template the pods came from is unchanged.
	spec := clusterSpec()
	require.Empty(t, spec.WorkerGroupSpecs[0].Template.Spec.InitContainers)
}

// Names as KubeRay makes them: the identifier label keeps the last 63
// characters, with an "r" for a leading punctuation mark; the pod name
// prefix is cut at 50 and lower-cased.
func TestRayPodNames(t *testing.T) {
	long := "Run-" + strings.Repeat("a", 70)
	ps := pods(t, rayCluster(long, clusterSpec()))
	id := ps[0].Meta.Labels["ray.io/identifier"]
	require.Len(t, id, 63)
	require.True(t, strings.HasSuffix(long+"-head", id))
	require.Equal(t, strings.ToLower(long[:50])+"-head-", ps[0].GenerateName)
	for _, n := range []int{50, 51, 55} {
		name := strings.Repeat("n", n)
		ps := pods(t, rayCluster(name, clusterSpec()))
		require.Equal(t, name[:50]+"-head-", ps[0].GenerateName, "a %d-character cluster name", n)
	}

	// The last 63 characters of "c-qqq…q-head" start with the dash.
	q := strings.Repeat("q", 57)
	ps = pods(t, rayCluster("c-"+q, clusterSpec()))
	require.Equal(t, "r"+q+"-head", ps[0].Meta.Labels["ray.io/identifier"])
	require.Equal(t, q[1:]+"-worker", ps[1].Meta.Labels["ray.io/identifier"])
}

// Objects reads data and typed objects alike; a typed object is kept as it
// is and encoded only when asked.
func TestObjects(t *testing.T) {
	objs, err := workload.Objects([]any{
		rayCluster("rc", clusterSpec()),
		map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "namespace": "ns"}},
	})
	require.NoError(t, err)
	require.Len(t, objs, 2)
	require.Equal(t, "RayCluster/rc", objs[0].Ref())
	require.Equal(t, "ray.io/v1", objs[0].APIVersion)
	require.Nil(t, objs[0].Data)
	m, err := objs[0].Map()
	require.NoError(t, err)
	require.Equal(t, "RayCluster", m["kind"])
	require.Equal(t, "ConfigMap/cm", objs[1].Ref())
	require.Equal(t, "ns", objs[1].Namespace)

	_, err = workload.Objects([]any{make(chan int)})
	require.ErrorContains(t, err, "object 0 (chan int)")
}

// An object that does not decode as its kind is an error naming it; the
// others' pods are still listed.
func TestPodsNamesWhatDoesNotDecode(t *testing.T) {
	objs, err := workload.Objects([]any{
		map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "bad"}, "spec": "not a spec"},
		rayCluster("rc", clusterSpec()),
	})
	require.NoError(t, err)
	ps, errs := workload.Pods(objs)
	require.Len(t, ps, 2)
	require.Len(t, errs, 1)
	require.ErrorContains(t, errs[0], "Deployment/bad: does not decode as Deployment")
}

// Each pod set says how many pods it stands for, at the size the run runs
// at: worker groups as KubeRay counts them (replicas clamped × numOfHosts,
// a suspended cluster counted as started), a Deployment's replicas.
func TestPodCounts(t *testing.T) {
	spec := clusterSpec()
	spec.Suspend = ptr.To(true)
	spec.WorkerGroupSpecs[0].Replicas, spec.WorkerGroupSpecs[0].MaxReplicas, spec.WorkerGroupSpecs[0].NumOfHosts = ptr.To[int32](5), ptr.To[int32](3), 2
	dep := func(replicas *int32) *appsv1.Deployment {
		return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: appsv1.DeploymentSpec{Replicas: replicas}}
	}
	cases := []struct {
		name string
		obj  any
		want []string
	}{
		{"suspended cluster, clamped replicas × hosts", rayCluster("c", spec), []string{"RayCluster/c head 1", "RayCluster/c worker group gpu 6"}},
		{"deployment replicas", dep(ptr.To[int32](3)), []string{"Deployment/d pod 3"}},
		{"deployment without replicas", dep(nil), []string{"Deployment/d pod 1"}},
		{"submitter", rayJob(rayv1.K8sJobMode, nil), []string{"RayJob/job head 1", "RayJob/job worker group gpu 0", "RayJob/job submitter 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, p := range pods(t, c.obj) {
				got = append(got, p.Name()+" "+strconv.FormatInt(p.Count, 10))
			}
			require.Equal(t, c.want, got)
		})
	}
}
