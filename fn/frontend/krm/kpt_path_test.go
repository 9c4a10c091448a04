package krm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

// TestKptExecOnPath pins what docs/krm.md says about the exec form with a
// bare name, `- exec: "nrl-k8s fn"`: kpt finds nrl-k8s on the PATH of the
// `kpt fn render` process (nothing else: not the package, not the Kptfile's
// directory), and says so when it is not there.
func TestKptExecOnPath(t *testing.T) {
	kpt := kptBinary(t)
	dir := exampleTree(t, "kpt")
	useExecFunction(t, dir, "nrl-k8s fn")
	binDir := filepath.Dir(clirun.Binary(t))

	render := func(path string) (string, error) {
		cmd := exec.Command(kpt, "fn", "render", "--allow-exec", dir)
		cmd.Env = append(os.Environ(), "PATH="+path)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Without nrl-k8s on PATH (kpt itself is called by absolute path).
	out, err := render("/usr/bin:/bin")
	require.Error(t, err, "%s", out)
	require.Contains(t, out, "nrl-k8s", "kpt's error names the missing executable")

	out, err = render(binDir + string(os.PathListSeparator) + os.Getenv("PATH"))
	require.NoError(t, err, "%s", out)
	entries, err := os.ReadDir(filepath.Join(dir, "qwen3-30b-math-gb300"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Contains(t, " "+strings.Join(names, " "), " rayjob_", "kpt wrote the run's RayJob: %v", names)
}
