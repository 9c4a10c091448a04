package review

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// SecurityGate prints the security and scope section of every run whose
// render differs there from base (the committed manifests, or the base
// branch's), and reports whether a run's Pod Security level rose or its
// namespaces changed without the repository's allow-list permitting it.
func SecurityGate(stderr io.Writer, disk source.Disk, root string, res *renderall.Result, base map[string][]byte) (bool, error) {
	var allow *renderall.Allow
	allowFile := filepath.Join(root, renderall.AllowFile)
	if data, err := disk.ReadFile(filepath.ToSlash(allowFile)); err == nil {
		if allow, err = renderall.ParseAllow(filepath.ToSlash(allowFile), data); err != nil {
			return false, err
		}
	} else if !errors.Is(err, source.ErrNotFound) {
		return false, err
	}
	failed := false
	for _, n := range res.Runs {
		data, ok := res.Files[n]
		if !ok {
			continue
		}
		cur, err := Parse(n, n, data)
		if err != nil {
			return false, err
		}
		// A run without a base manifest is new: compared against nothing,
		// it has no level to rise from and no namespace to leave.
		olds := Render{}
		if b, ok := base[n]; ok {
			old, err := Parse(n, n, b)
			if err != nil {
				fmt.Fprintf(stderr, "%s: the base manifest is not a render (%v); compared against nothing\n", n, err)
			} else {
				olds[n] = old
			}
		}
		s := Diff(olds, Render{n: cur})
		if len(s.Runs) == 0 {
			continue
		}
		d := s.Runs[0]
		if len(d.Security) == 0 && len(d.KindsAdded)+len(d.KindsRemoved) == 0 && !d.LevelRose() && !d.NamespaceChanged() {
			continue
		}
		fmt.Fprintf(stderr, "%s: security and scope:\n", n)
		for _, l := range d.SecurityLines() {
			fmt.Fprintf(stderr, "  %s\n", safetext.Inline(l))
		}
		if d.LevelRose() && !allow.PermitsLevel(n, d.PodSecurityAfter) {
			failed = true
			fmt.Fprintf(stderr, "%s: error: the run's Pod Security level rises from %s to %s; refused unless %s allows it (runs.%s.podSecurity: %s), a file reviewed like code\n", n, d.PodSecurityBefore, d.PodSecurityAfter, renderall.AllowFile, n, d.PodSecurityAfter)
		}
		if d.NamespaceChanged() && !allow.PermitsNamespaces(n, d.NamespacesAfter) {
			failed = true
			fmt.Fprintf(stderr, "%s: error: the run's namespaces change from [%s] to [%s]; refused unless %s lists them (runs.%s.namespaces), a file reviewed like code\n", n, strings.Join(d.NamespacesBefore, ", "), strings.Join(d.NamespacesAfter, ", "), renderall.AllowFile, n)
		}
	}
	return failed, nil
}
