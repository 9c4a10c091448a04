package manifest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
)

// The dev pod takes the `dev:` section over the profile's own settings,
// the run's image over both, and the workspace claim or an emptyDir (with
// a warning).
func TestDevPod(t *testing.T) {
	const base = "image: prof\nimagePullSecrets: [ps]\nserviceAccount: psa\nnamespace: team\n"
	for _, tc := range []struct {
		name, profile string
		p             runparams.Run
		want          []string // image, pull secret, service account, claim, mount, instance
		warn          bool
	}{
		{"profile's settings", base + "dev: {pvcName: ws, secretName: s}", runparams.Run{User: "alice"},
			[]string{"prof", "ps", "psa", "ws", "/mnt/rl-workspace/alice", "alice-dev-pod"}, false},
		{"dev section wins", base + "dev: {pvcName: ws, image: dimg, imagePullSecrets: [dps], serviceAccount: dsa, mountPath: /w}", runparams.Run{User: "alice"},
			[]string{"dimg", "dps", "dsa", "ws", "/w/alice", "alice-dev-pod"}, false},
		{"run image, run name", base + "dev: {pvcName: ws}", runparams.Run{User: "bob", Image: "run", Name: "sweep"},
			[]string{"run", "ps", "psa", "ws", "/mnt/rl-workspace/bob", "sweep"}, false},
		{"no claim", base, runparams.Run{User: "alice"}, []string{"prof", "ps", "psa", "", "/mnt/rl-workspace/alice", "alice-dev-pod"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &builder{in: infraOf(t, tc.profile), p: runparams.Params{Run: tc.p}, file: "p.yaml"}
			pod := b.devPod()
			claim := ""
			if v := pod.Spec.Volumes[0].PersistentVolumeClaim; v != nil {
				claim = v.ClaimName
			}
			c := pod.Spec.Containers[0]
			require.Equal(t, tc.want, []string{c.Image, pod.Spec.ImagePullSecrets[0].Name, pod.Spec.ServiceAccountName, claim, c.WorkingDir, pod.Labels["app.kubernetes.io/instance"]})
			require.Equal(t, tc.p.User+"-dev-pod", pod.Name, "one per user: a run name does not rename it")
			require.Equal(t, tc.warn, len(b.ds) == 1, "%v", b.ds)
		})
	}
}
