// Package charts embeds the hand-written files of charts/nemo-rl-run (its
// templates, values, Chart.yaml, README and .helmignore), so that
// `nrl-k8s chart-new` can write a chart for a platform team's own profiles
// from the binary alone; the generated files come from fn/frontend/chartgen.
package charts

import "embed"

// Skeleton holds the chart's hand-written files under nemo-rl-run/.
//
//go:embed nemo-rl-run/Chart.yaml nemo-rl-run/values.yaml nemo-rl-run/README.md nemo-rl-run/.helmignore nemo-rl-run/templates/_helpers.tpl nemo-rl-run/templates/_knobs.tpl nemo-rl-run/templates/NOTES.txt nemo-rl-run/templates/tests
var Skeleton embed.FS

// SkeletonRoot is the chart's directory inside Skeleton.
const SkeletonRoot = "nemo-rl-run"
