package recipe

import "sync"

// JobInFlight is how many input bytes the runs of one job (render-all, a
// runs repository in diff) may hold at once beyond the oldest run's: input
// costs up to ~150 times its size in memory while a run renders
// (docs/reliability.md), so with MaxRunInput for the oldest run the job
// stays near (1 + 4) MiB × 150 ≈ 750 MB however many cores render.
const JobInFlight = 1 << 20

// JobBudget weights a job's concurrency by input size: a run admits each
// file's bytes before parsing it, and waits while the bytes in flight would
// pass JobInFlight, so many small runs render in parallel and large ones
// one after another. The oldest run still rendering never waits (its own
// budget, MaxRunInput, bounds it), so the job always progresses.
type JobBudget struct {
	mu       sync.Mutex
	cond     *sync.Cond
	inFlight int
	held     map[int]int // run index → bytes held; every running run
}

// NewJobBudget returns an empty budget.
func NewJobBudget() *JobBudget {
	j := &JobBudget{held: map[int]int{}}
	j.cond = sync.NewCond(&j.mu)
	return j
}

// Start registers run as rendering.
func (j *JobBudget) Start(run int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.held[run] += 0
}

// Acquire takes n bytes for run, waiting while that would pass JobInFlight
// and run is not the oldest one rendering.
func (j *JobBudget) Acquire(run, n int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.held[run] += 0
	for j.inFlight+n > JobInFlight && !j.oldest(run) {
		j.cond.Wait()
	}
	j.held[run] += n
	j.inFlight += n
}

// Done releases what run holds.
func (j *JobBudget) Done(run int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.inFlight -= j.held[run]
	delete(j.held, run)
	j.cond.Broadcast()
}

func (j *JobBudget) oldest(run int) bool {
	for r := range j.held {
		if r < run {
			return false
		}
	}
	return true
}
