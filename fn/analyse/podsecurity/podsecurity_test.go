package podsecurity

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
)

// restrictedSC is what Pod Security restricted asks of a container.
func restrictedSC() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

func pod(spec corev1.PodSpec) *corev1.Pod {
	return &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: spec}
}

func cluster(head, worker corev1.PodSpec, mut func(*rayv1.RayClusterSpec)) *rayv1.RayCluster {
	c := &rayv1.RayCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: "ns"},
		Spec: rayv1.RayClusterSpec{
			HeadGroupSpec:    rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: head}},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "gpu", Template: corev1.PodTemplateSpec{Spec: worker}}},
		},
	}
	if mut != nil {
		mut(&c.Spec)
	}
	return c
}

func one(name string, sc *corev1.SecurityContext) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "i", SecurityContext: sc}}}
}

// want is one expected violation: path, level and check.
type want struct {
	path  string
	level Level
	check string
}

// evaluateCase is one object, the level it fits and the violations it has.
type evaluateCase struct {
	name  string
	obj   any
	level Level
	want  []want
	// injected: the violation at this path is KubeRay's container.
	injected string
	why      string
}

// evaluateCases is TestEvaluate's table: pods, KubeRay's own containers and a
// Deployment read from a rendered.Doc.
func evaluateCases(t *testing.T) []evaluateCase {
	ipcLock := &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"IPC_LOCK"}}}
	restrictedIPC := restrictedSC()
	restrictedIPC.Capabilities.Add = []corev1.Capability{"IPC_LOCK"}
	hostPath := one("c", restrictedSC())
	hostPath.Volumes = []corev1.Volume{
		{Name: "shm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}}},
	}
	unconfined := one("c", restrictedSC())
	unconfined.Containers[0].SecurityContext.SeccompProfile = nil
	unconfined.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
	hostNet := one("c", restrictedSC())
	hostNet.HostNetwork = true
	podLevel := one("c", &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}})
	podLevel.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	noEscalation := restrictedSC()
	noEscalation.AllowPrivilegeEscalation = nil
	wp := "spec.workerGroupSpecs[0].template.spec.containers[0]"
	return []evaluateCase{
		{name: "restricted pod", obj: pod(one("c", restrictedSC())), level: Restricted},
		{name: "pod-level settings cover the container", obj: pod(podLevel), level: Restricted},
		{name: "no securityContext fits baseline; restricted asks four fields", obj: pod(one("c", nil)), level: Baseline, want: []want{
			{"spec.containers[0].securityContext.allowPrivilegeEscalation", Restricted, "allowPrivilegeEscalation"},
			{"spec.containers[0].securityContext.capabilities", Restricted, "capabilities_restricted"},
			{"spec.containers[0].securityContext.runAsNonRoot", Restricted, "runAsNonRoot"},
			{"spec.containers[0].securityContext.seccompProfile", Restricted, "seccompProfile_restricted"},
		}},
		{name: "restricted-only field: allowPrivilegeEscalation unset", obj: pod(one("c", noEscalation)), level: Baseline, want: []want{
			{"spec.containers[0].securityContext.allowPrivilegeEscalation", Restricted, "allowPrivilegeEscalation"},
		}},
		{name: "IPC_LOCK breaks baseline", obj: pod(one("c", restrictedIPC)), level: Privileged, want: []want{
			{"spec.containers[0].securityContext.capabilities.add", Baseline, "capabilities_baseline"},
			{"spec.containers[0].securityContext.capabilities", Restricted, "capabilities_restricted"},
		}, why: "RLIMIT_MEMLOCK"},
		{name: "hostPath breaks baseline at the volume", obj: pod(hostPath), level: Privileged, want: []want{
			{"spec.volumes[1].hostPath", Baseline, "hostPathVolumes"},
			{"spec.volumes[1]", Restricted, "restrictedVolumes"},
		}, why: "hostPath"},
		{name: "pod-level seccomp Unconfined", obj: pod(unconfined), level: Privileged, want: []want{
			{"spec.securityContext.seccompProfile", Baseline, "seccompProfile_baseline"},
			{"spec.securityContext.seccompProfile", Restricted, "seccompProfile_restricted"},
		}},
		{name: "hostNetwork", obj: pod(hostNet), level: Privileged, want: []want{
			{"spec.hostNetwork", Baseline, "hostNamespaces"},
		}},
		{name: "worker's IPC_LOCK is inherited by KubeRay's wait-gcs-ready", obj: cluster(one("ray-head", restrictedSC()), one("ray-worker", restrictedIPC), nil), level: Privileged, want: []want{
			{wp + ".securityContext.capabilities.add", Baseline, "capabilities_baseline"},
			{wp + ".securityContext.capabilities", Restricted, "capabilities_restricted"},
		}, injected: wp + ".securityContext.capabilities.add"},
		{name: "a restricted worker stays restricted with the init container", obj: cluster(one("ray-head", restrictedSC()), one("ray-worker", restrictedSC()), nil), level: Restricted},
		{name: "autoscaler container KubeRay adds to the head", obj: cluster(one("ray-head", restrictedSC()), one("ray-worker", restrictedSC()), func(s *rayv1.RayClusterSpec) {
			s.EnableInTreeAutoscaling = ptr.To(true)
			s.AutoscalerOptions = &rayv1.AutoscalerOptions{SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}}
		}), level: Baseline, want: []want{
			{"spec.autoscalerOptions.securityContext.capabilities", Restricted, "capabilities_restricted"},
		}, injected: "spec.autoscalerOptions.securityContext.capabilities"},
		{name: "RayJob in K8sJobMode: KubeRay's default submitter pod", obj: &rayv1.RayJob{
			TypeMeta: metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayJob"}, ObjectMeta: metav1.ObjectMeta{Name: "j"},
			Spec: rayv1.RayJobSpec{SubmissionMode: rayv1.K8sJobMode, RayClusterSpec: &cluster(one("ray-head", restrictedSC()), one("ray-worker", restrictedSC()), nil).Spec},
		}, level: Baseline, want: []want{
			{"spec.submitterPodTemplate", Restricted, "allowPrivilegeEscalation"},
			{"spec.submitterPodTemplate", Restricted, "capabilities_restricted"},
			{"spec.submitterPodTemplate", Restricted, "runAsNonRoot"},
			{"spec.submitterPodTemplate", Restricted, "seccompProfile_restricted"},
		}, injected: "spec.submitterPodTemplate"},
		{name: "RayJob in HTTPMode: no submitter pod", obj: &rayv1.RayJob{
			TypeMeta: metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayJob"}, ObjectMeta: metav1.ObjectMeta{Name: "j"},
			Spec: rayv1.RayJobSpec{SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &cluster(one("ray-head", restrictedSC()), one("ray-worker", restrictedSC()), nil).Spec},
		}, level: Restricted},
		{name: "Deployment template, read from an rendered.Doc", obj: mustDoc(t, &appsv1.Deployment{
			TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "d"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: one("c", ipcLock)}},
		}), level: Privileged, want: []want{
			{"spec.template.spec.containers[0].securityContext.capabilities.add", Baseline, "capabilities_baseline"},
		}},
	}
}

func TestEvaluate(t *testing.T) {
	for _, tc := range evaluateCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			rep := Evaluate([]any{tc.obj})
			require.Empty(t, rep.Unread)
			require.Equal(t, tc.level, rep.Level)
			// The level the evaluator gives agrees with the violations found.
			worst := Restricted
			for _, v := range rep.Violations {
				if v.Level == Baseline {
					worst = Privileged
				} else if worst == Restricted {
					worst = Baseline
				}
			}
			require.Equal(t, rep.Level, worst, "%+v", rep.Violations)
			got := map[want]Violation{}
			for _, v := range rep.Violations {
				got[want{v.Path, v.Level, v.Check}] = v
				require.NotEmpty(t, v.Reason)
			}
			for _, w := range tc.want {
				v, ok := got[w]
				require.True(t, ok, "missing %+v in %+v", w, rep.Violations)
				if tc.injected == w.path {
					require.Contains(t, v.Injected, "KubeRay v1.5.0")
				}
				if tc.why != "" && w.level == Baseline {
					require.Contains(t, v.Why, tc.why)
				}
			}
			if tc.level == Restricted || tc.name == "hostNetwork" {
				// Exactly the listed ones where the list is complete.
				require.Len(t, rep.Violations, len(tc.want), "%+v", rep.Violations)
			}
		})
	}
}

func TestInitContainerDetailNamesBoth(t *testing.T) {
	ipc := restrictedSC()
	ipc.Capabilities.Add = []corev1.Capability{"IPC_LOCK"}
	rep := Evaluate([]any{cluster(one("ray-head", restrictedSC()), one("ray-worker", ipc), nil)})
	for _, v := range rep.Violations {
		if v.Check == "capabilities_baseline" {
			require.Contains(t, v.Detail, `"wait-gcs-ready"`)
			require.Contains(t, v.Detail, `"ray-worker"`)
			require.Equal(t, "worker group gpu", v.Pod)
			return
		}
	}
	t.Fatalf("no capabilities_baseline violation in %+v", rep.Violations)
}

// Every check the library runs has a field here: a check added upstream
// must be placed before it can be blamed on the right field.
func TestEveryCheckHasAField(t *testing.T) {
	for _, c := range policy.DefaultChecks() {
		_, ok := containerFields[string(c.ID)]
		require.True(t, ok, "check %s has no entry in containerFields", c.ID)
	}
}

func TestLevelAllows(t *testing.T) {
	require.True(t, Baseline.Allows(Restricted))
	require.True(t, Baseline.Allows(Baseline))
	require.False(t, Baseline.Allows(Privileged))
	require.False(t, Restricted.Allows(Baseline))
	require.True(t, Privileged.Allows(Privileged))
}

func mustDoc(t *testing.T, o any) rendered.Doc {
	d, err := emit.ToDoc(o)
	require.NoError(t, err)
	return d
}

// TestLatestOnlyEvaluatorAgrees: the evaluator built from each check's
// newest version only (latestOnly) judges every pod at "latest" as the
// library's full evaluator does, level by level, reasons and details
// included; pods below break each check in turn.
func TestLatestOnlyEvaluatorAgrees(t *testing.T) {
	full, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	lean, err := policy.NewEvaluator(latestOnly(policy.DefaultChecks()), nil)
	require.NoError(t, err)

	base := func() (metav1.ObjectMeta, corev1.PodSpec) {
		return metav1.ObjectMeta{Name: "p"}, corev1.PodSpec{
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
			Containers:      []corev1.Container{{Name: "c", Image: "i", SecurityContext: restrictedSC()}},
			InitContainers:  []corev1.Container{{Name: "init", Image: "i", SecurityContext: restrictedSC()}},
		}
	}
	muts := map[string]func(*metav1.ObjectMeta, *corev1.PodSpec){
		"restricted": func(*metav1.ObjectMeta, *corev1.PodSpec) {},
		"privileged": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Privileged = ptr.To(true)
		},
		"IPC_LOCK": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"IPC_LOCK"}
		},
		"NET_BIND_SERVICE": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"NET_BIND_SERVICE"}
		},
		"no drop ALL": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) { s.InitContainers[0].SecurityContext.Capabilities = nil },
		"escalation": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		},
		"root": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) { s.SecurityContext.RunAsUser = ptr.To[int64](0) },
		"runAsNonRoot false": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.RunAsNonRoot = ptr.To(false)
		},
		"seccomp unconfined": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined
		},
		"seccomp unset": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) { s.Containers[0].SecurityContext.SeccompProfile = nil },
		"hostPath": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		},
		"nfs volume": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "n", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "s", Path: "/"}}}}
		},
		"host namespaces": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) { s.HostNetwork, s.HostIPC, s.HostPID = true, true, true },
		"hostPort": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		},
		"procMount": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.ProcMount = ptr.To(corev1.UnmaskedProcMount)
		},
		"sysctl": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "net.core.somaxconn", Value: "1"}}
		},
		"selinux type": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.SecurityContext.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t", User: "u"}
		},
		"apparmor field": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		},
		"apparmor annotation": func(m *metav1.ObjectMeta, _ *corev1.PodSpec) {
			m.Annotations = map[string]string{"container.apparmor.security.beta.kubernetes.io/c": "unconfined"}
		},
		"windows hostProcess": func(_ *metav1.ObjectMeta, s *corev1.PodSpec) {
			s.SecurityContext.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
		},
	}
	refused := 0
	for name, mut := range muts {
		meta, spec := base()
		mut(&meta, &spec)
		for _, l := range []api.Level{api.LevelBaseline, api.LevelRestricted} {
			lv := api.LevelVersion{Level: l, Version: api.LatestVersion()}
			want := policy.AggregateCheckResults(full.EvaluatePod(lv, &meta, &spec))
			got := policy.AggregateCheckResults(lean.EvaluatePod(lv, &meta, &spec))
			require.Equal(t, want, got, "%s at %s", name, l)
			if !want.Allowed {
				refused++
			}
		}
	}
	require.Greater(t, refused, len(muts), "the pods break checks at both levels")
}

// BenchmarkEvaluatorBuild is what the first judged pod of every process
// pays for the library's evaluator (latestOnly: one table, not one per
// minor version; 164 µs and 107 KB before, 42 µs and 28 KB after, warm).
func BenchmarkEvaluatorBuild(b *testing.B) {
	for b.Loop() {
		if _, err := policy.NewEvaluator(latestOnly(policy.DefaultChecks()), nil); err != nil {
			b.Fatal(err)
		}
	}
}
