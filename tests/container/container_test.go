// Package container_test runs the function's container image the way kpt
// and kustomize run it (docs/krm.md): podman with runc, the image loaded
// from the docker-archive tarball `make image` writes, `kpt fn render` in
// image mode and `kustomize build` with a `container:` function (both run it
// `--user nobody --network none`), and the image directly on a read-only
// root file system. Every output is compared with the exec form's bytes:
// `nrl-k8s fn`, the CLI the image holds beside its entrypoint nrl-krm (the
// KRM function alone), so the tier also holds the two binaries to one
// output.
//
// podman's configuration and storage live in a temporary directory of the
// test's own (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF): nothing is pulled,
// and nothing is left in the host's image store. crun, Debian's default OCI
// runtime, refuses this project's CI machines' hybrid cgroup layout, hence
// runc, cgroupfs and no default ulimits (docs/krm.md, "Container image").
//
// Without podman and runc the tier is skipped (make test says so), unless
// CI=true or NRL_REQUIRE_PODMAN is set: then it fails.
package container_test

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	crtarball "github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/apiserver"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// image is the tag `make image` gives the image and the examples name.
const image = "ghcr.io/nemo-rl-krm/nrl-k8s:v0.1.0"

// ldflags are the Makefile's (LDFLAGS with VERSION=v0.1.0), so that without
// NRL_IMAGE_TAR the test builds what `make image` builds.
const ldflags = "-s -w -X github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli.Version=v0.1.0"

// podmanEnv is the environment every podman-using command gets.
type podmanEnv struct {
	dir     string   // the tier's own directory: config, storage, wrappers, logs
	bin     string   // the linux/amd64 nrl-k8s the image holds (the exec form runs `nrl-k8s fn`)
	environ []string // os.Environ with the podman settings and the wrappers first on PATH
	argsLog string   // every docker/podman command line the wrappers saw
}

var (
	setupOnce sync.Once
	setup     *podmanEnv
	setupErr  error
)

func TestMain(m *testing.M) {
	code := testenv.RunThenStop(m, "the real API server", apiserver.StopShared)
	if setup != nil {
		// The store holds only the image loaded here; remove it through
		// podman first so no overlay mount outlives the directory.
		cmd := exec.Command("podman", "rmi", "-a", "-f")
		cmd.Env = setup.environ
		_ = cmd.Run()
		_ = os.RemoveAll(setup.dir)
	}
	os.Exit(code)
}

// requirePodman skips (or, when CI requires the tier, fails) without
// podman and runc.
func requirePodman(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the image is linux/amd64; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	var missing []string
	if _, err := exec.LookPath("podman"); err != nil {
		missing = append(missing, "podman")
	}
	// podman finds runc in its own list of places, /usr/sbin among them,
	// which a non-root PATH often lacks.
	if _, err := exec.LookPath("runc"); err != nil {
		if _, err := os.Stat("/usr/sbin/runc"); err != nil {
			missing = append(missing, "runc")
		}
	}
	if len(missing) == 0 {
		return
	}
	what := strings.Join(missing, " and ") + " not installed"
	if os.Getenv("CI") == "true" || os.Getenv("NRL_REQUIRE_PODMAN") != "" {
		t.Fatalf("%s, and CI=true or NRL_REQUIRE_PODMAN requires the container tier (.ci/run installs them: apt-get install podman runc)", what)
	}
	t.Skipf("%s: the container tier is skipped (.ci/run installs them: apt-get install podman runc)", what)
}

// env sets the tier up once: configuration, wrappers, the image loaded.
func env(t *testing.T) *podmanEnv {
	t.Helper()
	requirePodman(t)
	root := testenv.RepoRoot(t)
	setupOnce.Do(func() { setup, setupErr = newPodmanEnv(root) })
	require.NoError(t, setupErr)
	return setup
}

func newPodmanEnv(root string) (*podmanEnv, error) {
	dir, err := os.MkdirTemp("", "nrl-container-tier-")
	if err != nil {
		return nil, err
	}
	e := &podmanEnv{dir: dir, argsLog: filepath.Join(dir, "args.log")}
	files := map[string]string{
		"containers.conf": "[containers]\ndefault_ulimits = []\n\n[engine]\ncgroup_manager = \"cgroupfs\"\nruntime = \"runc\"\n",
		"storage.conf": fmt.Sprintf("[storage]\ndriver = \"overlay\"\ngraphroot = %q\nrunroot = %q\n",
			filepath.Join(dir, "storage"), filepath.Join(dir, "run")),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return e, err
		}
	}
	podman, err := exec.LookPath("podman")
	if err != nil {
		return e, err
	}
	// The wrappers log each command line, then run podman: `docker` is what
	// kustomize runs (before any real docker CLI on PATH), `podman` what kpt
	// runs with KPT_FN_RUNTIME=podman.
	wrappers := filepath.Join(dir, "bin")
	if err := os.MkdirAll(wrappers, 0o755); err != nil {
		return e, err
	}
	for _, name := range []string{"docker", "podman"} {
		script := fmt.Sprintf("#!/bin/sh\necho %q \"$*\" >> %q\nexec %q \"$@\"\n", name, e.argsLog, podman)
		if err := os.WriteFile(filepath.Join(wrappers, name), []byte(script), 0o755); err != nil {
			return e, err
		}
	}
	e.environ = append(os.Environ(),
		"CONTAINERS_CONF="+filepath.Join(dir, "containers.conf"),
		"CONTAINERS_STORAGE_CONF="+filepath.Join(dir, "storage.conf"),
		"KPT_FN_RUNTIME=podman",
		"PATH="+wrappers+string(os.PathListSeparator)+os.Getenv("PATH"))

	tarball := os.Getenv("NRL_IMAGE_TAR") // make test passes make image's dist/nrl-k8s-image.tar
	if tarball == "" {
		if tarball, err = buildImage(root, dir); err != nil {
			return e, err
		}
	}
	if e.bin, err = binaryOf(dir, tarball); err != nil {
		return e, err
	}
	if out, err := e.command("podman", "load", "-i", tarball).CombinedOutput(); err != nil {
		return e, fmt.Errorf("podman load -i %s: %w\n%s", tarball, err, out)
	}
	return e, nil
}

// buildImage does what `make image` does, into dir.
func buildImage(root, dir string) (string, error) {
	bins := map[string]string{}
	for _, name := range []string{clirun.Lean, clirun.CLI} {
		bin, err := clirun.BuildForImage(dir, name, ldflags)
		if err != nil {
			return "", err
		}
		bins[name] = bin
	}
	tarball := filepath.Join(dir, "nrl-k8s-image.tar")
	img := exec.Command("go", "run", "./fn/cmd/build-image", "--binary", bins["nrl-krm"], "--cli", bins["nrl-k8s"], "--tag", image, "--out", tarball)
	img.Dir = root
	if out, err := img.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build-image: %w\n%s", err, out)
	}
	return tarball, nil
}

// binaryOf copies the CLI out of the image's one layer, so the exec form
// runs the bytes the image ships (`nrl-k8s fn`, while the container runs
// its entrypoint, nrl-krm).
func binaryOf(dir, tarball string) (string, error) {
	img, err := crtarball.ImageFromPath(tarball, nil)
	if err != nil {
		return "", err
	}
	layers, err := img.Layers()
	if err != nil {
		return "", err
	}
	if len(layers) != 1 {
		return "", fmt.Errorf("%s: %d layers, expected the one fn/tooling/ociimage writes", tarball, len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		return "", err
	}
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err != nil {
			return "", fmt.Errorf("%s: usr/local/bin/nrl-k8s not in the layer: %w", tarball, err)
		}
		if hdr.Name != "usr/local/bin/nrl-k8s" {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return "", err
		}
		out := filepath.Join(dir, "nrl-k8s")
		return out, os.WriteFile(out, b, 0o755)
	}
}

func (e *podmanEnv) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = e.environ
	return cmd
}

// tree copies what examples/<name> needs (it reads ../../recipes and
// ../../profiles) into a temp dir and returns the example's directory there.
func tree(t *testing.T, name string) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"examples/" + name, "recipes", "profiles"} {
		testenv.CopyDir(t, filepath.Join(testenv.RepoRoot(t), d), filepath.Join(root, d))
	}
	return filepath.Join(root, "examples", name)
}

// files reads every file under dir, by relative path.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return nil
	}))
	return out
}

// requireRanAs checks the logged command lines: the tool asked the runtime
// for user nobody and no network (what makes an image without a passwd
// entry for nobody fail).
func requireRanAs(t *testing.T, e *podmanEnv, wrapper string) {
	t.Helper()
	b, err := os.ReadFile(e.argsLog)
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, wrapper+" run ") && strings.Contains(line, image) {
			require.Contains(t, line, "--user nobody", line)
			require.Contains(t, line, "--network none", line)
			return
		}
	}
	t.Fatalf("no `%s run ... %s` in %s:\n%s", wrapper, image, e.argsLog, b)
}

// kpt fn render of examples/kpt in image mode writes the same files as
// with the exec form.
func TestKptImageMode(t *testing.T) {
	e := env(t)
	kpt := os.Getenv("NRL_KPT")
	if kpt == "" {
		var err error
		if kpt, err = exec.LookPath("kpt"); err != nil {
			t.Skip("no kpt binary (set NRL_KPT)")
		}
	}
	imageDir := tree(t, "kpt")
	out, err := e.command(kpt, "fn", "render", "--image-pull-policy", "never", imageDir).CombinedOutput()
	require.NoError(t, err, "kpt fn render (image mode):\n%s", out)
	requireRanAs(t, e, "podman")

	execDir := tree(t, "kpt")
	kptfile := filepath.Join(execDir, "Kptfile")
	b, err := os.ReadFile(kptfile)
	require.NoError(t, err)
	swapped := bytes.Replace(b, []byte("- image: "+image), []byte(`- exec: "`+e.bin+` fn"`), 1)
	require.NotEqual(t, string(b), string(swapped), "examples/kpt/Kptfile names the image %s", image)
	require.NoError(t, os.WriteFile(kptfile, swapped, 0o644))
	out, err = e.command(kpt, "fn", "render", "--allow-exec", execDir).CombinedOutput()
	require.NoError(t, err, "kpt fn render (exec):\n%s", out)

	got, want := files(t, imageDir), files(t, execDir)
	delete(want, "Kptfile") // the one file the two forms differ in, by construction
	delete(got, "Kptfile")
	require.Contains(t, got, filepath.Join("qwen3-30b-math-gb300", "rayjob_qwen3-30b-math-gb300.yaml"), "the render wrote the run's objects")
	require.Equal(t, keys(want), keys(got))
	for k := range want {
		require.Equal(t, want[k], got[k], k)
	}
}

// kustomize build of examples/kustomize-container (a container: function)
// gives the bytes of the same kustomization with the exec form.
func TestKustomizeContainerFunction(t *testing.T) {
	e := env(t)
	kustomize := os.Getenv("NRL_KUSTOMIZE")
	if kustomize == "" {
		t.Skip("NRL_KUSTOMIZE not set (make test sets it)")
	}
	dir := tree(t, "kustomize-container")
	build := func(extra ...string) []byte {
		args := append([]string{"build", "--enable-alpha-plugins", "--load-restrictor", "LoadRestrictionsNone"}, extra...)
		cmd := e.command(kustomize, append(args, dir)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "kustomize %v: %s", args, stderr.String())
		return out
	}
	got := build()
	requireRanAs(t, e, "docker")

	run := filepath.Join(dir, "run.yaml")
	b, err := os.ReadFile(run)
	require.NoError(t, err)
	container := "      container:\n        image: " + image + "\n"
	require.Contains(t, string(b), container, "examples/kustomize-container/run.yaml runs the image")
	require.NoError(t, os.WriteFile(run, []byte(strings.Replace(string(b), container,
		"      exec:\n        path: "+e.bin+"\n        args: [fn]\n", 1)), 0o644))
	want := build("--enable-exec")

	require.Contains(t, string(got), "kind: RayJob")
	require.Equal(t, string(want), string(got))
}

// The image on a read-only root file system, as nobody, without network,
// reads a ResourceList and writes what the exec form writes.
func TestImageReadOnlyAsNobody(t *testing.T) {
	e := env(t)
	in := resourceList(t)
	run := e.command("podman", "run", "--rm", "-i", "--read-only", "--user", "nobody", "--network", "none",
		"--security-opt=no-new-privileges", image)
	run.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	run.Stderr = &stderr
	got, err := run.Output()
	require.NoError(t, err, "podman run: %s", stderr.String())

	direct := exec.Command(e.bin, "fn")
	direct.Stdin = bytes.NewReader(in)
	want, err := direct.Output()
	require.NoError(t, err)
	require.Contains(t, string(got), "kind: RayJob")
	require.Equal(t, string(want), string(got))
}

// resourceList is examples/kpt's inputs and run as one ResourceList.
func resourceList(t *testing.T) []byte {
	t.Helper()
	root := testenv.RepoRoot(t)
	var fnConfig any
	b, err := os.ReadFile(filepath.Join(root, "examples/kpt/run.yaml"))
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &fnConfig))
	inputs, err := filepath.Glob(filepath.Join(root, "examples/kpt/inputs/*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	sort.Strings(inputs)
	items := []any{fnConfig}
	for _, f := range inputs {
		var item any
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.NoError(t, yaml.Unmarshal(b, &item))
		items = append(items, item)
	}
	out, err := yaml.Marshal(map[string]any{
		"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
		"functionConfig": fnConfig, "items": items,
	})
	require.NoError(t, err)
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
