package review_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
)

// FuzzParse: whatever a PR commits under manifests/, diff returns facts or
// an error naming the file, never a panic.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "..", "examples", "runs-repo", "manifests", "*.yaml"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("kind: RayJob\nmetadata: {name: j}\nspec: {rayClusterSpec: {workerGroupSpecs: [{replicas: -1, numOfHosts: -3}]}}\n"))
	f.Add([]byte("---\n---\n# only a comment\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := review.Parse("r", "r.yaml", data)
		if err != nil {
			return
		}
		_ = r.Totals()
		_ = review.Diff(review.Render{"r": r}, review.Render{}).Text()
		_ = review.Diff(review.Render{}, review.Render{"r": r}).Markdown()
	})
}
