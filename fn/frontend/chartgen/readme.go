package chartgen

import (
	"bytes"
	"fmt"
	"strings"
)

// The chart README's profile table is generated between these markers, so
// it cannot drift from the packaged data.
const (
	readmeBegin = "<!-- BEGIN GENERATED PROFILES (nrl-k8s chart-data) -->"
	readmeEnd   = "<!-- END GENERATED PROFILES -->"
)

// Readme returns readme with its generated section refreshed.
func Readme(readme []byte, idx *Index, meta *Meta) ([]byte, error) {
	start := bytes.Index(readme, []byte(readmeBegin))
	end := bytes.Index(readme, []byte(readmeEnd))
	if start < 0 || end < start {
		return nil, fmt.Errorf("charts README: expected the markers %q and %q around the profile table", readmeBegin, readmeEnd)
	}
	var b strings.Builder
	b.WriteString(readmeBegin + "\n")
	b.WriteString("| `profile` | What it is | GPU nodes × GPUs | Longest `user` (rayjob / raycluster) | Queue (the value that sets it) | Shared services (`mode=services`; longest `user`) | Profile / paired recipe |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, e := range idx.Profiles {
		pm := meta.Profiles[e.Name]
		gpus := make([]string, len(pm.Capacity.GPUsPerWorker))
		for i, g := range pm.Capacity.GPUsPerWorker {
			gpus[i] = fmt.Sprint(g)
		}
		queue := queueCell(pm)
		services := "none"
		if len(pm.Services) > 0 {
			var names []string
			for _, o := range pm.Services {
				names = append(names, o.Kind+" `"+strings.ReplaceAll(o.Name, SentinelUser, "<user>")+"`")
			}
			services = fmt.Sprintf("%s; %d", strings.Join(names, ", "), pm.MaxUserLength[ServicesMode])
		}
		raycluster := fmt.Sprint(pm.MaxUserLength["raycluster"])
		if _, refused := pm.ModesRefused["raycluster"]; refused {
			raycluster = "— (rayjob mode only)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %d × %s | %d / %s | %s | %s | `%s` / `%s` |\n", e.Name, e.Description,
			pm.Capacity.GPUNodes, strings.Join(gpus, ","), pm.MaxUserLength["rayjob"], raycluster, queue, services, pm.Profile, pm.Recipe)
	}
	out := append([]byte{}, readme[:start]...)
	out = append(out, b.String()...)
	return append(out, readme[end:]...), nil
}
