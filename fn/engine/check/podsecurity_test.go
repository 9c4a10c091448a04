package check

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// The profile's podSecurity against a pod adding IPC_LOCK (needs
// privileged) and one with no securityContext (needs baseline).
func TestPodSecurityFindings(t *testing.T) {
	doc := func(sc *corev1.SecurityContext) []rendered.Doc {
		d, err := emit.ToDoc(&corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", SecurityContext: sc}}},
		})
		require.NoError(t, err)
		return []rendered.Doc{d}
	}
	ipc := doc(&corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"IPC_LOCK"}}})
	plain := doc(nil)
	count := func(ds diag.List) (errs, warns, infos int) {
		for _, d := range ds {
			switch d.Severity {
			case diag.Error:
				errs++
				require.True(t, strings.HasPrefix(d.Field, "output Pod/p.spec.containers[0].securityContext"), d.Field)
				require.Contains(t, d.Message, "expected what")
			case diag.Warning:
				warns++
			case diag.Info:
				infos++
			}
		}
		return
	}
	for _, tc := range []struct {
		name               string
		declared           string
		docs               []rendered.Doc
		errs, warns, infos int
		info               string
	}{
		{"unset: baseline's refusal warned", "", ipc, 0, 1, 1, "need Pod Security privileged"},
		{"unset, fits baseline: a note", "", plain, 0, 0, 1, "need Pod Security baseline"},
		{"privileged declared: fits", "privileged", ipc, 0, 0, 1, "every pod fits privileged"},
		{"baseline declared: IPC_LOCK is an error", "baseline", ipc, 1, 0, 1, "need Pod Security privileged"},
		{"baseline declared, fits", "baseline", plain, 0, 0, 1, "every pod fits baseline"},
		{"restricted declared: every restricted field an error", "restricted", plain, 4, 0, 1, "need Pod Security baseline"},
		{"restricted declared, IPC_LOCK: baseline's and restricted's", "restricted", ipc, 5, 0, 1, "RLIMIT_MEMLOCK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := PodSecurity("p.yaml", tc.declared, tc.docs)
			e, w, i := count(ds)
			require.Equal(t, []int{tc.errs, tc.warns, tc.infos}, []int{e, w, i}, "%v", ds)
			var info string
			for _, d := range ds {
				if d.Severity == diag.Info {
					info = d.Message
					require.Equal(t, "podSecurity", d.Field)
				}
				require.Equal(t, "p.yaml", d.File)
			}
			require.Contains(t, info, tc.info)
		})
	}
}
