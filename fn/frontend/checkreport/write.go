package checkreport

import (
	"fmt"
	"io"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/schema"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Format is how check writes its report.
type Format string

const (
	// Text is the summary, the facts and the findings, for a person.
	Text Format = "text"
	// JSON is one object: findings, podSecurity, prerequisites.
	JSON Format = "json"
)

// Options are what check was asked for besides the run.
type Options struct {
	Format Format
	// Strict also validates every rendered object against its kind's
	// OpenAPI schema (schema.Validate), adding its findings to res.
	Strict bool
}

// Check refuses a format check does not write, before anything renders.
func (o Options) Check() error {
	if o.Format != Text && o.Format != JSON {
		return fmt.Errorf("-o %s: expected text (the summary) or json (one object: findings, podSecurity, prerequisites)", o.Format)
	}
	return nil
}

// Write writes check's report of res; with Strict, the schema findings are
// added to res.Diags first, so the caller's exit code counts them.
func Write(w io.Writer, res *pipeline.Result, opts Options) error {
	if err := opts.Check(); err != nil {
		return err
	}
	if opts.Strict && res.Docs != nil {
		// Only here: the CRDs are parsed on first use, so a plain render
		// or check pays nothing for them.
		res.Diags = append(res.Diags, schema.Validate(res.Profile.File, res.Docs)...)
	}
	facts := FactsOf(res)
	if opts.Format == JSON {
		return WriteJSON(w, res, facts)
	}
	if res.Profile != nil {
		Summary(w, res)
	}
	DestinationsOf(res.Docs).Print(w)
	facts.Print(w)
	fmt.Fprintln(w)
	Findings(w, res.Diags)
	return nil
}

// rendererKeys are the recipe keys the checks read.
var rendererKeys = []string{
	"cluster.gpus_per_node", "cluster.num_nodes", "cluster.segment_size",
	"policy.megatron_cfg.enabled", "policy.dtensor_cfg.enabled",
	"policy.generation.colocated.enabled",
	"policy.generation.colocated.resources.num_nodes",
	"policy.generation.colocated.resources.gpus_per_node",
}

// Values is what `nrl-k8s values` prints: the resolved profile and, when
// the recipe resolved, its defaults chain and the keys the checks read.
func Values(res *pipeline.Result) ([]byte, error) {
	out := tree.NewMap()
	out.Set("infra", res.Profile.Tree)
	if res.Recipe != nil {
		keys := tree.NewMap()
		for _, k := range rendererKeys {
			if v, ok, dyn := res.Recipe.Value(k); ok {
				keys.Set(k, v)
			} else if dyn {
				keys.Set(k, "<set in the pod by a shell variable>")
			}
		}
		rm := tree.NewMap()
		rm.Set("file", res.Recipe.File)
		files := make([]any, len(res.Recipe.Files))
		for i, s := range res.Recipe.Files {
			files[i] = s
		}
		rm.Set("defaultsChain", files)
		rm.Set("keys", keys)
		out.Set("recipe", rm)
	}
	return tree.ToYAML(out)
}
