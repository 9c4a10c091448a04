package chartgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/secrets"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/batch"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// RenderedDir is where the rendered data lives inside the chart.
const RenderedDir = "files/rendered"

// MetaFile is the metadata file inside the chart.
const MetaFile = "files/profiles.json"

// Generate renders every packaged profile and returns the chart files it
// owns, keyed by path relative to the chart (files/..., values.schema.json,
// README.md with its generated section refreshed from readme, the chart's
// current README).
func Generate(idx *Index, readme []byte) (map[string][]byte, error) {
	return generate(idx, readme, nil, false)
}

func generate(idx *Index, readme []byte, env func(string) (string, bool), indexRelative bool) (map[string][]byte, error) {
	g := &gen{env: env, out: map[string][]byte{}}
	if indexRelative {
		g.indexDir = idx.Dir
	}
	meta := &Meta{
		Sentinels: Sentinels{User: SentinelUser, Namespace: SentinelNamespace, RunID: SentinelRunID, Name: SentinelName,
			Image: SentinelImage, Label: sentinelLabel, Annotation: sentinelAnnotation,
			Override: SentinelOverride, ShellSafe: ShellSafePattern, Recipe: SentinelRecipe, RecipeHash: SentinelRecipeHash, Knobs: knobSentinels,
			Reserved: sentinelTexts()},
		State:      stateMeta,
		Profiles:   map[string]*ProfileMeta{},
		Secrets:    secrets.NameRules(),
		Namespaces: idx.Namespaces,
	}
	gens, err := g.profiles(idx.Profiles)
	if err != nil {
		return nil, err
	}
	for i, o := range gens {
		e := idx.Profiles[i]
		if o.err != nil {
			return nil, fmt.Errorf("profile %s (%s with %s): %w", e.Name, e.Profile, e.Recipe, o.err)
		}
		meta.Profiles[e.Name] = o.meta
		maps.Copy(g.out, o.out)
		g.maxDocs = max(g.maxDocs, o.maxDocs)
	}
	for i := 0; i < g.maxDocs; i++ {
		g.out[slotFile(i)] = []byte(fmt.Sprintf(slotTemplate, i))
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	g.out[MetaFile] = append(b, '\n')
	schema, err := Schema(idx, meta, g.out)
	if err != nil {
		return nil, err
	}
	g.out["values.schema.json"] = schema
	rd, err := Readme(readme, idx, meta)
	if err != nil {
		return nil, err
	}
	g.out["README.md"] = rd
	return g.out, nil
}

// profileGen is what generating one profile's renders made.
type profileGen struct {
	meta    *ProfileMeta
	out     map[string][]byte
	maxDocs int
	err     error
}

// profiles generates every profile's renders on the batch renderer
// (fn/engine/batch: every core, one loader each, one memory budget), each
// into a gen of its own; the results are in index order.
func (g *gen) profiles(entries []Entry) ([]profileGen, error) {
	outs, err := batch.Render(source.Disk{}, len(entries), func(l *recipe.Loader, i int) batch.Output[profileGen] {
		pg := &gen{env: g.env, indexDir: g.indexDir, loader: l, out: map[string][]byte{}}
		pm, err := pg.profile(entries[i])
		size := 0
		for _, b := range pg.out {
			size += len(b)
		}
		return batch.Output[profileGen]{Value: profileGen{meta: pm, out: pg.out, maxDocs: pg.maxDocs, err: err}, Bytes: size}
	})
	if err != nil {
		return nil, err
	}
	res := make([]profileGen, len(outs))
	for i, o := range outs {
		res[i] = o.Value
	}
	return res, nil
}

type gen struct {
	// env is the environment ${oc.env:...} reads: nil for chart-data (the
	// committed chart), the packager's for chart-new, as nrl-k8s render
	// reads the caller's.
	env     func(string) (string, bool)
	loader  *recipe.Loader
	out     map[string][]byte
	maxDocs int
	// indexDir, when set (chart-new), is the index's directory: the chart
	// records profile, recipe and finding paths relative to it. chart-data
	// records them relative to the working directory, the repository root,
	// where NOTES' commands run.
	indexDir string
}

// shown is a file as the chart records it: relative to the index for
// chart-new, as loaded (relative to the working directory) for chart-data.
func (g *gen) shown(file string) string {
	if g.indexDir == "" || file == "" {
		return file
	}
	from, err1 := filepath.Abs(filepath.FromSlash(g.indexDir))
	to, err2 := filepath.Abs(filepath.FromSlash(file))
	if err1 != nil || err2 != nil {
		return file
	}
	rel, err := filepath.Rel(from, to)
	if err != nil {
		return file
	}
	return filepath.ToSlash(rel)
}

// One template file per document slot. Helm 3 trims each document of a
// multi-document template, Helm 4 keeps the newline before a `---` in the
// document before it (so it prints a blank line there); a template that
// yields one document, with no trailing newline, prints the same under
// both. Slot files render nothing when the run has fewer documents; Helm
// orders files by name, and then (stably) by kind, which keeps the engine's
// order because the engine sorts by the same install order.
const slotTemplate = `{{- /* Generated by nrl-k8s chart-data: document %[1]d of the run (see _helpers.tpl). */ -}}
{{- include "nemo-rl-run.doc" (list . %[1]d) -}}
`

func slotFile(i int) string { return fmt.Sprintf("templates/doc-%02d.yaml", i) }

// slotRE matches the slot files Generate owns.
var slotRE = lazyre.New(`^doc-[0-9]+\.yaml$`)

func (g *gen) run(e Entry, mode runparams.Mode, v Values, env func(string) (string, bool)) (*pipeline.Result, string, error) {
	labels := map[string]string{vocab.ManagedByLabel: ChartManagedBy}
	for k, val := range v.Labels {
		labels[k] = val
	}
	infra := append([]string(nil), v.infra...)
	if !v.Knobs.empty() {
		in, err := g.baseInfra(e, v, env)
		if err != nil {
			return nil, "", err
		}
		infra = append(infra, KnobOverrides(in, v.Knobs)...)
	}
	res := pipeline.Render(g.loader, pipeline.Request{
		Recipe:    e.Recipe,
		Profile:   e.Profile,
		Namespace: v.Namespace,
		Overrides: append(infra, v.Overrides...),
		// The chart has no environment to read: render with none, and
		// refuse profiles whose output depends on one (checked below).
		Env: env,
		Run: runparams.Run{
			Mode:            mode,
			User:            v.User,
			RunID:           v.RunID,
			Name:            v.Name,
			Image:           v.Image,
			Labels:          labels,
			Annotations:     v.Annotations,
			NoDeployments:   !v.services,
			OnlyDeployments: v.services,
			State:           v.state(),
		},
	})
	if res.Diags.HasErrors() {
		var msgs []string
		for _, d := range res.Diags.Sorted() {
			msgs = append(msgs, d.String())
		}
		return nil, "", fmt.Errorf("%s render failed: %s", mode, strings.Join(msgs, "; "))
	}
	data, err := EncodeDocs(res.Docs)
	return res, data, err
}

// EncodeDocs is the rendered-file format: a JSON array of the documents'
// data, keys sorted by encoding/json, one document per line so that a
// profile change shows as a readable diff.
func EncodeDocs(docs []rendered.Doc) (string, error) {
	var b strings.Builder
	b.WriteString("[\n")
	for i, d := range docs {
		j, err := json.Marshal(d.Data)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", d.Kind, d.Name, err)
		}
		b.Write(j)
		if i < len(docs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.String(), nil
}

// Write puts the generated files into the chart, removing rendered files
// that no profile produces any more.
func Write(chartDir string, files map[string][]byte) error {
	if err := os.MkdirAll(path.Join(chartDir, RenderedDir), 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(path.Join(chartDir, RenderedDir))
	if err != nil {
		return err
	}
	for _, en := range entries {
		rel := path.Join(RenderedDir, en.Name())
		if _, keep := files[rel]; !keep {
			if err := os.Remove(path.Join(chartDir, rel)); err != nil {
				return err
			}
		}
	}
	slots, err := os.ReadDir(path.Join(chartDir, "templates"))
	if err != nil {
		return err
	}
	for _, en := range slots {
		rel := path.Join("templates", en.Name())
		if _, keep := files[rel]; slotRE().MatchString(en.Name()) && !keep {
			if err := os.Remove(path.Join(chartDir, rel)); err != nil {
				return err
			}
		}
	}
	for _, rel := range tree.SortedKeys(files) {
		p := path.Join(chartDir, rel)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, files[rel]) {
			continue
		}
		if err := os.WriteFile(p, files[rel], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Regenerate is Generate of the index file for the chart at chartDir
// (paths relative to the working directory): the files `make chart` writes
// and `chart-data --check` compares.
func Regenerate(chartDir, indexFile string) (map[string][]byte, error) {
	idx, err := LoadIndex(filepath.ToSlash(indexFile))
	if err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(chartDir, "README.md"))
	if err != nil {
		return nil, err
	}
	return Generate(idx, readme)
}

// DataOptions is one `nrl-k8s chart-data`: the chart and the profile index
// (paths relative to the working directory). Check writes nothing and
// names each stale file on Stderr.
type DataOptions struct {
	Chart, Index string
	Check        bool
	Stderr       io.Writer
}

// Data regenerates the chart's packaged profile data and writes it, or with
// Check compares it with the committed files: stale ones are an error.
func Data(o DataOptions) error {
	files, err := Regenerate(o.Chart, o.Index)
	if err != nil {
		return err
	}
	if !o.Check {
		return Write(filepath.ToSlash(o.Chart), files)
	}
	stale, err := Stale(o.Chart, files)
	if err != nil {
		return err
	}
	for _, s := range stale {
		fmt.Fprintln(o.Stderr, s)
	}
	if len(stale) > 0 {
		return fmt.Errorf("%d chart file(s) are stale; run `make chart`", len(stale))
	}
	return nil
}
