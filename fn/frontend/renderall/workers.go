package renderall

import (
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
)

// WorkersDir, below the output directory, holds the worker bundle of each
// run MultiKueue dispatches (<run>.yaml): every worker applies it, and the
// manager applies manifests/<run>.yaml, the job object MultiKueue copies.
// Two files, not one, because they go to different clusters; below
// manifests/, so a run's review reads both beside each other.
const WorkersDir = "workers"

// split is a run's render by destination: manager is what
// manifests/<run>.yaml holds (the whole render when the run is not
// dispatched), workers the worker bundle (nil when not dispatched).
type split struct{ manager, workers []byte }

// splitRender emits the render's documents by rendered.RunDestinations:
// a run its profile has MultiKueue dispatch is split even when stopped
// (no job object: the manager gets nothing, the workers keep the rest).
func splitRender(pr *pipeline.Result) (split, error) {
	dispatched := pr.Profile != nil && registry.OwnerManagedBy(pr.Profile.Infra.Scheduler.View()) == vocab.MultiKueueControllerName
	dests := rendered.RunDestinations(pr.Docs, dispatched)
	if !dispatched {
		data, err := emit.Stream(pr.Docs)
		return split{manager: data}, err
	}
	var manager, workers []rendered.Doc
	for i, d := range dests {
		if d == rendered.Manager {
			manager = append(manager, pr.Docs[i])
		} else {
			workers = append(workers, pr.Docs[i])
		}
	}
	var out split
	var err error
	if len(manager) > 0 {
		if out.manager, err = emit.Stream(manager); err != nil {
			return split{}, err
		}
	}
	if out.workers, err = emit.Stream(workers); err != nil {
		return split{}, err
	}
	return out, nil
}

// Whole is every object of run's render: its manifest and, for a
// dispatched run, its worker bundle after it (the security gate and the
// review judge the run whole, wherever its objects go).
func (r *Result) Whole(run string) []byte {
	return Join(r.Files[run], r.Workers[run])
}

// Join is a run's manifest followed by its worker bundle, as Whole
// joins them (a committed tree's run, read back).
func Join(manifest, workers []byte) []byte {
	if len(workers) == 0 {
		return manifest
	}
	return append(append([]byte{}, manifest...), workers...)
}

// JoinAll is Join for every run of manifests, keyed by run.
func JoinAll(manifests, workers map[string][]byte) map[string][]byte {
	if len(workers) == 0 {
		return manifests
	}
	out := make(map[string][]byte, len(manifests))
	for n, b := range manifests {
		out[n] = Join(b, workers[n])
	}
	for n, b := range workers {
		if _, ok := out[n]; !ok {
			out[n] = b
		}
	}
	return out
}

// CompareWorkers is Compare for the worker bundles below outDir
// (manifests/workers): a run that renders none (not dispatched) has no
// file there, and a committed one is Elsewhere.
func CompareWorkers(outDir string, committed map[string][]byte, res *Result) []Drift {
	view := &Result{Runs: res.Runs, Files: map[string][]byte{}, Removed: res.Removed}
	for _, n := range res.Runs {
		if _, ok := res.Files[n]; !ok {
			continue // failed or removed: as its manifest
		}
		b, ok := res.Workers[n]
		if !ok {
			b = []byte{}
		}
		view.Files[n] = b
	}
	return Compare(outDir, committed, view)
}
