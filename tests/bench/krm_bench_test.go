package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krmframework"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// qwenInputs are the files the qwen run needs, by directory.
var qwenInputs = map[string][]string{
	"recipes/examples/configs":                         {"grpo_math_1B.yaml"},
	"recipes/examples/configs/recipes/llm/performance": {"grpo-qwen3-30ba3b-4n4g-async-1off.yaml", "grpo-qwen3-30ba3b-4n4g.yaml"},
	"profiles/gb300":                                   {"qwen3_30b_math_4n_4gpu.gb300.infra.yaml"},
}

func runYAML(name string) string {
	return `apiVersion: nemo-rl.nvidia.com/v1alpha1
kind: NemoRLRun
metadata:
  name: ` + name + `
spec:
  recipe: recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml
  profile: profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml
  user: alice
  namespace: ns-` + name + `
  name: ` + name + `
`
}

// resourceList is the ResourceList kustomize sends for n qwen runs.
func resourceList(b *testing.B, n int) []byte {
	root := testenv.RepoRoot(b)
	var items []*yaml.RNode
	for dir, names := range qwenInputs {
		files := map[string][]byte{}
		for _, name := range names {
			data, err := os.ReadFile(filepath.Join(root, dir, name))
			if err != nil {
				b.Fatal(err)
			}
			files[name] = data
		}
		cm, err := krm.FilesConfigMap(strings.ReplaceAll(dir, "/", "-"), dir, files)
		if err != nil {
			b.Fatal(err)
		}
		items = append(items, cm)
	}
	for i := 1; i < n; i++ {
		items = append(items, yaml.MustParse(runYAML(fmt.Sprintf("run-%d", i))))
	}
	var buf bytes.Buffer
	err := kio.ByteWriter{Writer: &buf, WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind,
		FunctionConfig: yaml.MustParse(runYAML("run-0"))}.Write(items)
	if err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkKRMFunction is the function in process on 1, 100 and 1,000 runs:
// ResourceList bytes in, ResourceList bytes out, through krm.Execute as
// `nrl-k8s fn` runs it (kyaml's reader and writer included).
func BenchmarkKRMFunction(b *testing.B) { benchmarkFunction(b, krm.Execute) }

// BenchmarkKRMFunctionFramework is the same work through kyaml's own
// framework.Execute (the rendered documents parsed into yaml nodes and
// encoded again by kyaml): the cost krm.Execute's splicing avoids, kept
// measurable so the copy stays justified (docs/performance.md).
func BenchmarkKRMFunctionFramework(b *testing.B) {
	benchmarkFunction(b, func(rw *kio.ByteReadWriter) error { return framework.Execute(krmframework.Processor{}, rw) })
}

func benchmarkFunction(b *testing.B, execute func(*kio.ByteReadWriter) error) {
	for _, n := range []int{1, 100, 1000} {
		in := resourceList(b, n)
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var out bytes.Buffer
				if err := execute(&kio.ByteReadWriter{Reader: bytes.NewReader(in), Writer: &out}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// nrlK8s builds the binary once; krusty execs it as the exec function.
func nrlK8s(b *testing.B) string {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bench-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath, binErr = clirun.Build(dir, "-trimpath", "-ldflags", "-s -w")
	})
	if binErr != nil {
		b.Fatal(binErr)
	}
	return binPath
}

// kustomization writes a kustomization of n qwen runs (one function config
// and n-1 NemoRLRun items, all rendered by one exec of fnPath).
func kustomization(b *testing.B, n int, fnPath string, args []string) string {
	root := testenv.RepoRoot(b)
	dir := b.TempDir()
	var k strings.Builder
	k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nconfigMapGenerator:\n")
	for d, names := range qwenInputs {
		fmt.Fprintf(&k, "- name: %s\n  files:\n", strings.ReplaceAll(d, "/", "-"))
		for _, name := range names {
			src, err := os.ReadFile(filepath.Join(root, d, name))
			if err != nil {
				b.Fatal(err)
			}
			local := strings.ReplaceAll(d, "/", "-") + "-" + name
			if err := os.WriteFile(filepath.Join(dir, local), src, 0o644); err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(&k, "  - %s=%s\n", name, local)
		}
		fmt.Fprintf(&k, "  options:\n    disableNameSuffixHash: true\n    annotations:\n      nemo-rl.nvidia.com/files-dir: %s\n      config.kubernetes.io/local-config: \"true\"\n", d)
	}
	k.WriteString("resources: [runs.yaml]\ntransformers: [run.yaml]\nsortOptions: {order: fifo}\n")
	var runs strings.Builder
	for i := 1; i < n; i++ {
		runs.WriteString("---\n" + runYAML(fmt.Sprintf("run-%d", i)))
	}
	if n == 1 {
		// kustomize needs at least one resource file; an unrelated item passes through.
		runs.WriteString("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n")
	}
	argList := ""
	if len(args) > 0 {
		argList = "\n        args: [" + strings.Join(args, ", ") + "]"
	}
	fnConfig := strings.Replace(runYAML("run-0"), "metadata:\n", "metadata:\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: "+fnPath+argList+"\n", 1)
	for name, data := range map[string]string{"kustomization.yaml": k.String(), "runs.yaml": runs.String(), "run.yaml": fnConfig} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func krustyBuild(b *testing.B, dir string) []byte {
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
	opts.PluginConfig.FnpLoadingOptions.EnableExec = true
	m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		b.Fatal(err)
	}
	out, err := m.AsYaml()
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkKustomizeRuns is `kustomize build --enable-alpha-plugins
// --enable-exec` in process (krusty) of 1, 10, 100 and 1,000 runs, all
// rendered by one exec of nrl-k8s fn; each run is 3 objects.
func BenchmarkKustomizeRuns(b *testing.B) {
	bin := nrlK8s(b)
	for _, n := range []int{1, 10, 100, 1000} {
		dir := kustomization(b, n, bin, []string{"fn"})
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out := krustyBuild(b, dir)
				if got := bytes.Count(out, []byte("\nkind: RayJob\n")); got != n {
					b.Fatalf("%d RayJobs; expected %d", got, n)
				}
			}
		})
	}
}

// BenchmarkKustomizeNoopFunction is the same kustomization with a no-op
// exec function (cat echoes the ResourceList): the floor the function's
// own cost is measured against.
func BenchmarkKustomizeNoopFunction(b *testing.B) {
	cat, err := exec.LookPath("cat")
	if err != nil {
		b.Skip("no cat")
	}
	for _, n := range []int{1, 1000} {
		dir := kustomization(b, n, cat, nil)
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				krustyBuild(b, dir)
			}
		})
	}
}

// BenchmarkKustomizeStatic is kustomize's own floor for the same output:
// the objects of n runs, rendered beforehand, as plain resources files and
// no function at all. kustomize appends each object to its ResMap after a
// linear scan for a duplicate id, so this grows with n²; no function can
// make a build of that many objects faster. dirs>1 is the same objects in
// that many sub-kustomizations (as BenchmarkKustomizePlugin's dirs=10).
func BenchmarkKustomizeStatic(b *testing.B) {
	one := renderOnce(b, request(b, examples[0], "rayjob"))
	for _, c := range []struct{ runs, dirs int }{{1, 1}, {10, 1}, {100, 1}, {300, 1}, {1000, 1}, {1000, 10}} {
		dir := shardedKustomization(b, c.runs, c.dirs, func(sub string, lo, hi int) {
			var all bytes.Buffer
			for i := lo; i < hi; i++ {
				all.Write(bytes.ReplaceAll(one, []byte("namespace: default\n"), fmt.Appendf(nil, "namespace: ns-%d\n", i)))
			}
			writeFile(b, sub, "all.yaml", all.String())
			writeFile(b, sub, "kustomization.yaml", "resources: [all.yaml]\n")
		})
		b.Run(caseName(c.runs, "dirs", c.dirs), func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuNow()
			for b.Loop() {
				if got := bytes.Count(krustyBuild(b, dir), []byte("\nkind: RayJob\n")); got != c.runs {
					b.Fatalf("%d RayJobs; expected %d", got, c.runs)
				}
			}
			cpu.report(b)
		})
	}
}

// shardedKustomization writes a kustomization of n runs: with dirs=1 the
// directory itself, else one sub-kustomization d<i> per share of the runs,
// listed as the top one's resources. write fills a directory with runs
// [lo, hi). The qwen inputs are at the top (generators read them at ..).
func shardedKustomization(b *testing.B, n, dirs int, write func(dir string, lo, hi int)) string {
	dir := b.TempDir()
	copyQwenInputs(b, dir)
	// A repository, as kustomizations live in: a generator's files: root
	// (.. from a sub-kustomization) must stay inside the work tree.
	defer testenv.GitCheckout(b, dir)
	if dirs == 1 {
		write(dir, 0, n)
		return dir
	}
	var subs []string
	for d := 0; d < dirs; d++ {
		sub := fmt.Sprintf("d%d", d)
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			b.Fatal(err)
		}
		write(filepath.Join(dir, sub), d*n/dirs, (d+1)*n/dirs)
		subs = append(subs, sub)
	}
	writeFile(b, dir, "kustomization.yaml", "resources: ["+strings.Join(subs, ", ")+"]\n")
	return dir
}

func caseName(runs int, part string, parts int) string {
	name := fmt.Sprintf("runs=%d", runs)
	if parts > 1 {
		name += fmt.Sprintf("/%s=%d", part, parts)
	}
	return name
}

func writeFile(b *testing.B, dir, name, data string) {
	if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
		b.Fatal(err)
	}
}

// copyQwenInputs copies the qwen run's recipe and profile files to dir at
// their package paths.
func copyQwenInputs(b *testing.B, dir string) {
	root := testenv.RepoRoot(b)
	for d, names := range qwenInputs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			b.Fatal(err)
		}
		for _, name := range names {
			src, err := os.ReadFile(filepath.Join(root, d, name))
			if err != nil {
				b.Fatal(err)
			}
			writeFile(b, filepath.Join(dir, d), name, string(src))
		}
	}
}

// generatorKustomizationFiles writes a kustomization that renders n qwen
// runs with the function under generators: (docs/krm.md, "Generator mode"):
// the inputs are files on disk below the kustomization, the runs split
// into files runs-<i>.yaml, one generator each (gen-<i>.yaml).
func generatorKustomizationFiles(b *testing.B, n, files int, fnPath string) string {
	dir := b.TempDir()
	copyQwenInputs(b, dir)
	var gens []string
	for f := 0; f < files; f++ {
		runsFile, genFile := "runs.yaml", "gen.yaml"
		if files > 1 {
			runsFile, genFile = fmt.Sprintf("runs-%d.yaml", f), fmt.Sprintf("gen-%d.yaml", f)
		}
		writeFile(b, dir, runsFile, runsYAML(f*n/files, (f+1)*n/files))
		writeFile(b, dir, genFile, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: nrl-k8s-%d\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\n"+
			"    config.kubernetes.io/function: |\n      exec:\n        path: %s\n        args: [fn, --files, ., --runs, %s]\n", f, fnPath, runsFile))
		gens = append(gens, genFile)
	}
	writeFile(b, dir, "kustomization.yaml", "generators: ["+strings.Join(gens, ", ")+"]\n")
	return dir
}

// runsYAML is the NemoRLRuns run-lo .. run-(hi-1), one document each.
func runsYAML(lo, hi int) string {
	var runs strings.Builder
	for i := lo; i < hi; i++ {
		runs.WriteString("---\n" + runYAML(fmt.Sprintf("run-%d", i)))
	}
	return runs.String()
}

// BenchmarkKustomizeGenerator is `kustomize build` of 1, 100 and 1,000 runs
// with the function under generators:, the documented way for many runs;
// BenchmarkKustomizeStatic is the floor it is compared with (the same
// objects as a plain resources file, no function): a generator's output is
// appended to kustomize's ResMap once, where a transformer's is merged back
// object by object (UpdateResMapValues, docs/performance.md).
func BenchmarkKustomizeGenerator(b *testing.B) {
	bin := nrlK8s(b)
	for _, c := range []struct{ runs, files int }{{1, 1}, {100, 1}, {300, 1}, {300, 3}, {1000, 1}, {1000, 10}} {
		dir := generatorKustomizationFiles(b, c.runs, c.files, bin)
		b.Run(caseName(c.runs, "files", c.files), func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuNow()
			for b.Loop() {
				if got := bytes.Count(krustyBuild(b, dir), []byte("\nkind: RayJob\n")); got != c.runs {
					b.Fatalf("%d RayJobs; expected %d", got, c.runs)
				}
			}
			cpu.report(b)
		})
	}
}

// BenchmarkKustomizePlugin is generator mode as a kustomize exec plugin
// (nrl-k8s linked as NemoRLRunGenerator, docs/krm.md): kustomize parses the
// plugin's output once, as it parses BenchmarkKustomizeStatic's file, where
// a KRM function's output is parsed, re-encoded and parsed again. dirs=10
// is the documented layout for a thousand runs: one generator per
// sub-kustomization, whose output kustomize merges into its own ResMap
// (AbsorbAll, quadratic in that generator's objects only) and the top
// appends as it appends a resources file.
func BenchmarkKustomizePlugin(b *testing.B) {
	bin := nrlK8s(b)
	home := b.TempDir()
	link := filepath.Join(home, "nemo-rl.nvidia.com", "v1alpha1", "nemorlrungenerator", "NemoRLRunGenerator")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink(bin, link); err != nil {
		b.Fatal(err)
	}
	// kustomize's plugin loader reads the home from the environment only;
	// its plugin config files go to TMPDIR.
	b.Setenv("KUSTOMIZE_PLUGIN_HOME", home)
	b.Setenv("TMPDIR", b.TempDir())
	for _, c := range []struct{ runs, dirs int }{{1, 1}, {100, 1}, {300, 1}, {1000, 1}, {1000, 10}} {
		dir := shardedKustomization(b, c.runs, c.dirs, func(sub string, lo, hi int) {
			files, runs := ".", runsYAML(lo, hi)
			if c.dirs > 1 {
				// A run's paths are relative to its file, one level down.
				files = ".."
				runs = strings.NewReplacer("recipe: ", "recipe: ../", "profile: ", "profile: ../").Replace(runs)
			}
			writeFile(b, sub, "runs.yaml", runs)
			writeFile(b, sub, "gen.yaml", "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRunGenerator\nmetadata:\n  name: runs\nfiles: "+files+"\nruns: [runs.yaml]\nwarnings: ignore\n")
			writeFile(b, sub, "kustomization.yaml", "generators: [gen.yaml]\n")
		})
		b.Run(caseName(c.runs, "dirs", c.dirs), func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuNow()
			for b.Loop() {
				if got := bytes.Count(krustyBuild(b, dir), []byte("\nkind: RayJob\n")); got != c.runs {
					b.Fatalf("%d RayJobs; expected %d", got, c.runs)
				}
			}
			cpu.report(b)
		})
	}
}

// cpuClock is the CPU time of this process and its waited-for children
// (the exec function), which a loaded machine changes far less than the
// wall time: reported as cpu-s/op beside ns/op.
type cpuClock struct{ self, children time.Duration }

func cpuNow() cpuClock {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	d := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return cpuClock{d(self), d(children)}
}

func (c cpuClock) report(b *testing.B) {
	now := cpuNow()
	used := (now.self - c.self) + (now.children - c.children)
	b.ReportMetric(used.Seconds()/float64(b.N), "cpu-s/op")
}
