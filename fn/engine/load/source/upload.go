package source

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// UploadSize measures what nrl-k8s would upload for codeSource=upload: it
// sums file sizes under root for the given repo-relative paths, skipping
// what nrl-k8s's staging skips.
func UploadSize(root string) func([]string) (int64, error) {
	skip := map[string]bool{".gitignore": true, "__pycache__": true, ".venv": true, ".git": true, ".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true}
	return func(paths []string) (int64, error) {
		var total int64
		for _, p := range paths {
			full := filepath.Join(root, filepath.FromSlash(p))
			if _, err := os.Stat(full); err != nil {
				continue // missing paths are skipped, as in nrl-k8s
			}
			err := filepath.WalkDir(full, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				name := d.Name()
				if skip[name] || strings.HasSuffix(name, ".egg-info") {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if strings.HasSuffix(name, ".pyc") || strings.HasSuffix(name, ".pyo") || d.IsDir() {
					return nil
				}
				info, err := d.Info()
				if err != nil {
					return err
				}
				total += info.Size()
				return nil
			})
			if err != nil {
				return 0, err
			}
		}
		return total, nil
	}
}
