// Package krm is the KRM function adapter: it turns a ResourceList (from
// `kustomize build --enable-alpha-plugins --enable-exec` or `kpt fn
// render`) into pipeline requests and the pipeline's documents and findings
// back into items and results. It does no I/O of its own: the input files
// arrive as ConfigMap items (see inputs.go), so it is tested directly on
// ResourceLists and is safe to fuzz through Process.
package krm

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/batch"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/runrequest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// Process renders every NemoRLRun of a ResourceList (its function config
// and its NemoRLRun items) from the files its input ConfigMaps carry. It
// returns the items that are not ours, unchanged and in input order, then
// each run's objects in emit order, and one result per finding; the
// results' ExitCode is 1 exactly when one is an error, which is what makes
// `nrl-k8s fn` exit non-zero as kustomize and kpt expect.
//
// Process is the library form (fn/frontend/krmframework wraps it as a kyaml
// framework.ResourceListProcessor, for framework.Execute and tests): the
// rendered documents become yaml nodes. `nrl-k8s fn` runs Execute instead,
// which writes the same documents without decoding them again.
func Process(items []*yaml.RNode, fnConfig *yaml.RNode) ([]*yaml.RNode, Results) {
	out := renderList(items, fnConfig, allPathKeys, Options{})
	kept := out.items
	for _, doc := range out.docs {
		n, err := yaml.Parse(string(doc.data))
		if err != nil { // emit wrote it; a failure here is a bug, reported as such
			out.results = append(out.results, &Result{Severity: SeverityError,
				Message: fmt.Sprintf("%s %s: cannot read back the rendered document: %v", doc.kind, doc.name, err)})
			continue
		}
		kept = append(kept, n)
	}
	return kept, out.results
}

// output is what one invocation produces: the items that pass through, the
// rendered documents (as nrl-k8s render's bytes, path annotations
// included) and the findings.
type output struct {
	items   []*yaml.RNode
	docs    []document
	results Results
}

// document is one rendered object, encoded.
type document struct {
	kind, name string
	data       []byte
}

// renderList is Process and Execute's shared body; keys are the path and
// index annotations each document carries (see pathKeysFor).
func renderList(items []*yaml.RNode, fnConfig *yaml.RNode, keys []string, opts Options) output {
	in := classify(append(append([]*yaml.RNode{}, items...), opts.Runs...))
	in.disk = opts.Files
	var results Results
	results = append(results, in.results...)

	runs, rs := collectRuns(fnConfig, in.runs, items)
	results = append(results, rs...)
	if len(runs) == 0 && len(in.results) == 0 && len(rs) == 0 {
		results = append(results, &Result{
			Severity: SeverityError,
			Message: fmt.Sprintf("no run to render: expected the functionConfig or an item to be a %s %s "+
				"(found functionConfig %s)", vocab.APIVersion, runspec.Kind, describe(fnConfig)),
		})
	}

	locate(in, runs)
	runs, rs = ownDirs(in, runs)
	results = append(results, rs...)
	out := output{items: dropPrevious(in.passThrough, runs)}
	outs, err := renderAll(in, runs, keys)
	if err != nil {
		results = append(results, &Result{Severity: SeverityError, Message: err.Error()})
		out.results = dataOnly(results)
		return out
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.spec.Metadata.Name
	}
	collisions := batch.Collisions(names, outs)
	for i, o := range outs {
		results = append(results, o.Value.results...)
		if msgs := collisions[i]; len(msgs) > 0 {
			for _, m := range msgs {
				results = append(results, &Result{Severity: SeverityError, ResourceRef: runs[i].ref,
					File: fileRef(runs[i].file), Message: fmt.Sprintf("run %s: %s", runs[i].spec.Metadata.Name, m)})
			}
			continue
		}
		out.docs = append(out.docs, o.Value.docs...)
	}
	out.results = dataOnly(results)
	return out
}

// dataOnly escapes the text of every result (messages quote keys, file
// names and values from the package): kpt and kustomize print results and
// the function's log to the CI log, where a newline in them would start a
// line of its own (fn/support/safetext).
func dataOnly(rs Results) Results {
	for _, r := range rs {
		r.Message = safetext.Inline(r.Message)
		if r.File != nil {
			r.File.Path = safetext.Inline(r.File.Path)
		}
		if r.Field != nil {
			r.Field.Path = safetext.Inline(r.Field.Path)
		}
		if r.ResourceRef != nil {
			r.ResourceRef.Name = safetext.Inline(r.ResourceRef.Name)
			r.ResourceRef.Namespace = safetext.Inline(r.ResourceRef.Namespace)
		}
	}
	return rs
}

type runOutput struct {
	docs    []document
	results Results
}

// renderAll renders the runs on every core, in run order, under the batch's
// memory budget (fn/engine/batch): rendering every run of a list in one
// process is what makes 1,000 runs affordable.
func renderAll(in *inputs, runs []runItem, keys []string) ([]batch.Output[runOutput], error) {
	var src source.Source = in.files
	if in.disk != nil {
		src = layered{mem: in.files, disk: in.disk}
	}
	return batch.Render(src, len(runs), func(l *recipe.Loader, i int) batch.Output[runOutput] {
		var o runOutput
		var ids []rendered.Identity
		o.docs, ids, o.results = render(l, in, runs[i], keys)
		size := 0
		for _, d := range o.docs {
			size += len(d.data)
		}
		return batch.Output[runOutput]{Value: o, IDs: ids, Bytes: size}
	})
}

// run is one NemoRLRun to render, with where it came from.
type runItem struct {
	spec *runspec.NemoRLRun
	file string // the item's path annotation, for results
	ref  *yaml.ResourceIdentifier
	// was is the run's name before kustomize's namePrefix/nameSuffix (the
	// name kustomize-inputs knew it by).
	was string
	// base is the run file's slash path relative to the package root, which
	// the run's paths are relative to ("" for a file at the root).
	base string
}

// locate sets each run's base: what the run-files ConfigMap says (written
// by kustomize-inputs beside the files, relative to the same root as their
// files-dir annotations; kustomize passes a transformer's items and config
// without file paths, and kpt's paths are relative to the kpt package,
// which need not be that root), else its path annotation (the generator
// mode's, relative to --files; kpt's), else the package root ("").
func locate(in *inputs, runs []runItem) {
	for i := range runs {
		r := &runs[i]
		switch {
		case in.runFiles[r.was] != "":
			r.base = in.runFiles[r.was]
		case r.file != "":
			r.base = path.Clean(r.file)
		}
	}
}

// collectRuns parses the function config (when it is a NemoRLRun) and the
// NemoRLRun items. A kustomize generator is given its own config as an
// item as well, so an item with the config's identity and spec is the
// same run. all are every item of the list (what kustomize's transformers
// did to them is evidence of what they did not do to the config).
func collectRuns(fnConfig *yaml.RNode, items, all []*yaml.RNode) ([]runItem, Results) {
	var runs []runItem
	var results Results
	seen := map[string]bool{}
	configIsItem := false // a generator's config, also given as an item
	add := func(n *yaml.RNode, what string) {
		file := fileOf(n)
		ref := refOf(n)
		data, err := n.String()
		if err != nil {
			results = append(results, &Result{Severity: SeverityError, ResourceRef: ref, File: fileRef(file),
				Message: fmt.Sprintf("%s: cannot encode: %v", what, err)})
			return
		}
		spec, err := runspec.ParseNode(file, []byte(data))
		if err != nil {
			field, msg := "", err.Error()
			if re, ok := errors.AsType[*runspec.Error](err); ok {
				field, msg = re.Field, re.Msg
			}
			results = append(results, &Result{Severity: SeverityError, ResourceRef: ref,
				File: fileRef(file), Field: fieldRef(field), Message: what + ": " + msg})
			return
		}
		if was, renamed := renamedByKustomize(n); renamed && spec.Spec.Name != "" {
			results = append(results, &Result{Severity: SeverityError, ResourceRef: ref,
				File: fileRef(file), Field: fieldRef("spec.name"),
				Message: fmt.Sprintf("%s: kustomize renamed this NemoRLRun %s (was %s), but spec.name %q fixes the run name, so its objects would not follow; expected no spec.name: metadata.name is the run name",
					what, spec.Metadata.Name, was, spec.Spec.Name)})
			return
		}
		if what == "functionConfig" && !configIsItem {
			if ns := kustomizeNamespace(all); ns != "" {
				spec.Metadata.Namespace = ns
			}
		}
		if what == "functionConfig" {
			if changes := kustomizeChanges(all, spec.Metadata.Labels); len(changes) > 0 && !configIsItem {
				results = append(results, &Result{Severity: SeverityError, ResourceRef: ref,
					File: fileRef(file), Message: what + ": " + functionConfigUntransformed(spec.Metadata.Name, changes).Error()})
				return
			}
		}
		if seen[spec.Metadata.Name] {
			results = append(results, &Result{Severity: SeverityError, ResourceRef: ref,
				File: fileRef(file), Field: fieldRef("metadata.name"),
				Message: fmt.Sprintf("%s: a second NemoRLRun named %q; expected unique names (the name is the output directory)",
					what, spec.Metadata.Name)})
			return
		}
		seen[spec.Metadata.Name] = true
		was := spec.Metadata.Name
		if old, renamed := renamedByKustomize(n); renamed {
			was = old
		}
		runs = append(runs, runItem{spec: spec, file: file, ref: ref, was: was})
	}
	var configID, configSpec string
	if isRun(fnConfig) {
		configID, configSpec = identity(fnConfig), specOf(fnConfig)
		for _, n := range items {
			configIsItem = configIsItem || (identity(n) == configID && specOf(n) == configSpec)
		}
		add(fnConfig, "functionConfig")
	}
	for _, n := range items {
		if configID != "" && identity(n) == configID && specOf(n) == configSpec {
			continue
		}
		add(n, "item")
	}
	return runs, results
}

func specOf(n *yaml.RNode) string {
	f := n.Field("spec")
	if f == nil || f.Value.IsNil() {
		return ""
	}
	s, _ := f.Value.String()
	return s
}

// render runs one request through the pipeline and encodes its output.
func render(l *recipe.Loader, in *inputs, r runItem, keys []string) ([]document, []rendered.Identity, Results) {
	req := runrequest.Of(r.spec, r.base)
	var results Results
	fail := func(field, msg string) {
		results = append(results, &Result{
			Severity: SeverityError, ResourceRef: r.ref, File: fileRef(r.file), Field: fieldRef(field),
			Message: fmt.Sprintf("run %s: %s: %s", r.spec.Metadata.Name, field, msg)})
	}
	if r.spec.IsRemoved() {
		fail("spec.state", "removed is render-all's way to take a run out of a runs repository under Flux (docs/gitops.md, \"Flux, kustomize\"), not a state the function renders; expected run or stopped, or the run left out of the kustomization")
		return nil, nil, results
	}
	for _, f := range []struct{ field, given, path string }{
		{"spec.recipe", r.spec.Spec.Recipe, req.Recipe}, {"spec.profile", r.spec.Spec.Profile, req.Profile},
		{"spec.defaults", r.spec.Spec.Defaults, req.UserDefaults}, {"spec.recipeRoot", r.spec.Spec.RecipeRoot, req.RecipeRoot},
	} {
		if f.path == "" {
			continue
		}
		leaves := path.IsAbs(f.path) || f.path == ".." || strings.HasPrefix(f.path, "../")
		if leaves && f.field == "spec.recipeRoot" && in.disk == nil {
			fail(f.field, runspec.RecipeRootOutside(f.given))
			continue
		}
		if leaves && in.disk != nil {
			fail(f.field, fmt.Sprintf("%q%s leaves the package root (--files); expected a path relative to the run's file that stays inside it", f.given, relativeTo(r.base, f.given)))
			continue
		}
		if f.field == "spec.recipeRoot" || in.disk != nil { // from disk: the loader says what is missing
			continue
		}
		if _, ok := in.files[f.path]; !ok {
			fail(f.field, fmt.Sprintf("no input file %q%s%s; expected a ConfigMap annotated %s: %s with the data key %q (files given: %s)",
				f.path, relativeTo(r.base, f.given), rootRelativeHint(in, r.base, f.given), vocab.FilesDirAnnotation, path.Dir(f.path), path.Base(f.path), in.listFiles()))
		}
	}
	if len(results) > 0 {
		return nil, nil, results
	}
	res := pipeline.Render(l, req)
	for _, d := range res.Diags.Sorted() {
		results = append(results, toResult(d, r.ref))
	}
	if res.Diags.HasErrors() {
		return nil, nil, results
	}
	ids := rendered.Identities(res.Docs)
	docs := make([]document, 0, len(res.Docs))
	index := map[string]int{}
	for _, d := range res.Docs {
		p := OutputPath(r.spec.Metadata.Name, d)
		setPath(d, keys, p, index[p])
		index[p]++
		b, err := emit.Marshal(d)
		if err != nil {
			results = append(results, &Result{Severity: SeverityError, ResourceRef: r.ref,
				Message: fmt.Sprintf("run %s: %s %s: %v", r.spec.Metadata.Name, d.Kind, d.Name, err)})
			return nil, nil, results
		}
		docs = append(docs, document{kind: d.Kind, name: d.Name, data: b})
	}
	return docs, ids, results
}

// relativeTo says which file a run's path was read from: its own ("" when
// the run's file is at the package root, where the path reads as given).
func relativeTo(base, given string) string {
	if base == "" || path.Dir(base) == "." {
		return ""
	}
	return fmt.Sprintf(" (%q relative to the run's file %s)", given, base)
}

// rootRelativeHint: a path that names an input file when read from the
// package root is a run file written before paths were relative to the
// run's file; say how to write it now.
func rootRelativeHint(in *inputs, base, given string) string {
	if base == "" || path.Dir(base) == "." {
		return ""
	}
	if _, ok := in.files[path.Clean(given)]; !ok {
		return ""
	}
	rel := strings.Repeat("../", strings.Count(path.Dir(base), "/")+1) + path.Clean(given)
	return fmt.Sprintf(" (%q is an input file relative to the package root: from %s write %q)", given, base, rel)
}

// dropPrevious removes what an earlier render wrote: kpt fn render feeds a
// package's files back in, and the objects under <run>/ (OutputPath) are
// about to be written again. Only this tool's output is dropped: a file at
// the path OutputPath gives its kind and name, labelled managed-by nrl-k8s
// (ownDirs has already refused a run whose directory holds anything else).
func dropPrevious(items []*yaml.RNode, runs []runItem) []*yaml.RNode {
	names := map[string]bool{}
	for _, r := range runs {
		names[r.spec.Metadata.Name] = true
	}
	out := make([]*yaml.RNode, 0, len(items))
	for _, n := range items {
		if dir, ok := previousOutput(n); ok && names[dir] {
			continue
		}
		out = append(out, n)
	}
	return out
}

// previousOutput reports whether n is a file this function wrote, and the
// run directory it is in.
func previousOutput(n *yaml.RNode) (string, bool) {
	if !isMapping(n) {
		return "", false
	}
	p := fileOf(n)
	p = path.Clean(p)
	dir, _, nested := strings.Cut(p, "/")
	if !nested || annotations(n)[vocab.LocalConfigAnnotation] == "true" {
		return "", false
	}
	if n.GetLabels()[vocab.ManagedByLabel] != vocab.ManagedByValue {
		return "", false
	}
	if p != OutputPath(dir, rendered.Doc{Kind: n.GetKind(), Name: n.GetName()}) {
		return "", false
	}
	return dir, true
}

// ownDirs refuses a run whose name is a directory of the package holding
// files that are not its output (a run named `app` would otherwise have
// kpt replace app/'s files): the run renders nothing and the files stay.
// The run's own NemoRLRun and input ConfigMaps may live there.
func ownDirs(in *inputs, runs []runItem) ([]runItem, Results) {
	foreign := map[string]string{}
	for _, n := range in.passThrough {
		if !isMapping(n) || in.consumed[n] {
			continue
		}
		p := fileOf(n)
		dir, _, nested := strings.Cut(path.Clean(p), "/")
		if !nested {
			continue
		}
		if _, ours := previousOutput(n); ours {
			continue
		}
		if _, seen := foreign[dir]; !seen {
			foreign[dir] = p
		}
	}
	var kept []runItem
	var results Results
	for _, r := range runs {
		name := r.spec.Metadata.Name
		if f, ok := foreign[name]; ok {
			results = append(results, &Result{Severity: SeverityError, ResourceRef: r.ref,
				File: fileRef(r.file), Field: fieldRef("metadata.name"),
				Message: fmt.Sprintf("run %s: the package directory %s/ holds files that are not this run's output (%s); expected a run name that is not an existing directory (the run's objects are written to %s/)", name, name, f, name)})
			continue
		}
		kept = append(kept, r)
	}
	return kept, results
}

// OutputPath is the file kpt fn render writes a document to: one directory
// per run, one file per object, so a re-render diffs object by object.
func OutputPath(run string, d rendered.Doc) string {
	return run + "/" + strings.ToLower(d.Kind) + "_" + d.Name + ".yaml"
}

// allPathKeys are the path and index annotations, internal and legacy
// forms: kpt reads the internal ones, kustomize and older tools the legacy
// ones. Process writes all four and framework.Execute then keeps only the
// forms the input used; Execute works out that subset first (pathKeysFor).
var allPathKeys = []string{
	kioutil.PathAnnotation, kioutil.IndexAnnotation,
	kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation, //nolint:staticcheck // kustomize still reads the legacy forms
}

// setPath writes the output file and index annotations into a document
// before it is encoded.
func setPath(d rendered.Doc, keys []string, p string, index int) {
	if len(keys) == 0 {
		return
	}
	md, ok := d.Data["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		d.Data["metadata"] = md
	}
	annos, ok := md["annotations"].(map[string]any)
	if !ok {
		annos = map[string]any{}
		md["annotations"] = annos
	}
	for _, k := range keys {
		if k == kioutil.PathAnnotation || k == kioutil.LegacyPathAnnotation { //nolint:staticcheck // the legacy form is written for kustomize
			annos[k] = p
		} else {
			annos[k] = strconv.Itoa(index)
		}
	}
}

// StripPath removes the path and index annotations Process adds (and an
// annotations or metadata mapping left empty), giving back the document as
// nrl-k8s render writes it.
func StripPath(n *yaml.RNode) error {
	for _, k := range allPathKeys {
		if err := n.PipeE(yaml.ClearAnnotation(k)); err != nil {
			return err
		}
	}
	return yaml.ClearEmptyAnnotations(n)
}

// toResult carries one finding over; the run's reference says which of
// many runs in one list it belongs to.
func toResult(d diag.Diagnostic, ref *yaml.ResourceIdentifier) *Result {
	sev := SeverityInfo
	switch d.Severity {
	case diag.Error:
		sev = SeverityError
	case diag.Warning:
		sev = SeverityWarning
	}
	return &Result{Severity: sev, Message: d.Message, ResourceRef: ref,
		Field: fieldRef(d.Field), File: fileRef(d.File)}
}

func fieldRef(p string) *Field {
	if p == "" {
		return nil
	}
	return &Field{Path: p}
}

func fileRef(p string) *File {
	if p == "" {
		return nil
	}
	return &File{Path: p}
}
