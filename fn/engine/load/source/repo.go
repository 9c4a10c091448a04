package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ConfineRepo is Confine plus the git rule: when root is in a git work tree
// (it or a parent has a .git entry), only the files git tracks below root
// are read, unless includeUntracked. A file an earlier CI step wrote into
// the checkout (a render, a download) is then not read as if the pull
// request had committed it. Tracked files are read as they are on disk.
func ConfineRepo(root string, includeUntracked bool) (Disk, error) {
	d, err := Confine(root)
	if err != nil || includeUntracked || !inWorkTree(d.root) {
		return d, err
	}
	tracked, unchecked, err := gitTracked(d.root)
	if err != nil {
		return Disk{}, fmt.Errorf("%s is in a git work tree, but the files git tracks cannot be listed (%w); run where `git ls-files` works, or pass --include-untracked to read every file", root, err)
	}
	d.tracked, d.unchecked = tracked, unchecked
	top := d.root
	d.initialized = sync.OnceValue(func() []string { return initializedOnly(top, tracked) })
	return d, nil
}

// initializedOnly lists the submodules of dir that `git submodule init`
// registered but no update checked out: `ls-files --recurse-submodules`
// leaves them out entirely (it recurses into them and finds no
// repository), so their gitlinks are read from the index itself. Run only
// when a file is not found: a render that finds its files pays nothing.
func initializedOnly(dir string, tracked map[string]bool) []string {
	listing, err := git(dir, "ls-files", "-z", "--stage")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range strings.Split(string(listing), "\x00") {
		meta, p, ok := strings.Cut(e, "\t")
		if !ok || !strings.HasPrefix(meta, "160000 ") {
			continue
		}
		checkedOut := false
		for f := range tracked {
			if strings.HasPrefix(f, p+"/") {
				checkedOut = true
				break
			}
		}
		if !checkedOut {
			out = append(out, p)
		}
	}
	return out
}

// Tracked reports whether the git rule lets p (an absolute path) be read:
// always, unless the Disk reads tracked files only and p is a file below
// the root that git does not track.
func (d Disk) Tracked(p string) bool {
	if d.tracked == nil {
		return true
	}
	cur, ok := d.inside(p)
	if !ok {
		return true // outside the root the git rule says nothing
	}
	rel, err := filepath.Rel(d.root, cur)
	return err == nil && d.tracked[filepath.ToSlash(rel)]
}

// inWorkTree: dir or a parent holds .git (a directory, or a linked
// worktree's file).
func inWorkTree(dir string) bool {
	_, ok := WorkTreeOf(dir)
	return ok
}

// WorkTreeOf is the nearest of dir (absolute) and its parents that holds
// .git: the top of the work tree (or submodule) holding dir, found without
// running git.
func WorkTreeOf(dir string) (string, bool) {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// gitTracked lists the files git tracks below dir (slash paths relative to
// dir), those of checked-out submodules included: a lab pins NeMo-RL's
// recipes as a submodule, and its files are as committed as the lab's own
// (the superproject pins the submodule's commit). A submodule git knows
// but has not checked out is listed in unchecked. git runs with hooks and
// the file-system monitor off: listing the index needs neither.
func gitTracked(dir string) (tracked map[string]bool, unchecked []string, err error) {
	listing, err := git(dir, "ls-files", "-z", "--cached", "--recurse-submodules")
	if err != nil {
		return nil, nil, err
	}
	tracked = map[string]bool{}
	for _, f := range strings.Split(string(listing), "\x00") {
		if f == "" {
			continue
		}
		// An entry that is a directory on disk is a submodule's gitlink
		// listed for itself: its files are not checked out.
		if st, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f))); err == nil && st.IsDir() {
			unchecked = append(unchecked, f)
			continue
		}
		tracked[f] = true
	}
	return tracked, unchecked, nil
}

// WriteFile replaces the regular file name (a path inside the root) with
// data without ever following a link: its directory must pass CheckDir and
// is created when missing, and is then opened as an os.Root, whose
// operations are openat-style and cannot leave it; an existing entry that
// is a symlink or not a regular file is refused, not replaced; the data is
// written to a fresh temporary file beside it (O_EXCL) and renamed over
// the name, so a reader sees the old file or the new one. Unconfined, the
// directory is used as given.
func (d Disk) WriteFile(name string, data []byte) error {
	dir, base := filepath.Split(filepath.Clean(name))
	r, err := d.openDir(dir, true)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }() // a directory handle: nothing to flush
	if err := regularOrAbsent(r, base, name); err != nil {
		return err
	}
	tmp := "." + base + ".nrl-k8s-tmp"
	_ = r.Remove(tmp) // a leftover of an interrupted run: ours to replace
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("%s: cannot write: %w", filepath.ToSlash(name), err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		return errors.Join(fmt.Errorf("%s: cannot write: %w", filepath.ToSlash(name), err), r.Remove(tmp))
	}
	if err := r.Rename(tmp, base); err != nil {
		return errors.Join(fmt.Errorf("%s: cannot write: %w", filepath.ToSlash(name), err), r.Remove(tmp))
	}
	return nil
}

// RemoveFile deletes the regular file name under the same rule as
// WriteFile; a missing file is not an error.
func (d Disk) RemoveFile(name string) error {
	dir, base := filepath.Split(filepath.Clean(name))
	r, err := d.openDir(dir, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }() // a directory handle: nothing to flush
	if err := regularOrAbsent(r, base, name); err != nil {
		return err
	}
	if err := r.Remove(base); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// openDir checks dir and opens it as an os.Root, creating it first when
// create is set.
func (d Disk) openDir(dir string, create bool) (*os.Root, error) {
	if dir == "" {
		dir = "."
	}
	if err := d.CheckDir(dir); err != nil {
		return nil, err
	}
	if create {
		if err := d.mkdirAll(dir); err != nil {
			return nil, err
		}
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 || !st.IsDir() {
		return nil, refused("%s: is not a directory; refused: files are never written or deleted through a link", filepath.ToSlash(dir))
	}
	return os.OpenRoot(dir)
}

// mkdirAll creates dir below the root through an os.Root, so a link that
// appears on the way is not followed out of it.
func (d Disk) mkdirAll(dir string) error {
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	if d.root == "" {
		return os.MkdirAll(dir, 0o755)
	}
	rel, err := d.dirInRoot(dir)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(d.root)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }() // a directory handle: nothing to flush
	return r.MkdirAll(rel, 0o755)
}

// regularOrAbsent refuses to replace or delete anything but a regular file.
func regularOrAbsent(r *os.Root, base, name string) error {
	st, err := r.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return refused("%s: is a symlink; refused: files are never written or deleted through a link (remove it)", filepath.ToSlash(name))
	case !st.Mode().IsRegular():
		return refused("%s: is not a regular file; refused (remove it)", filepath.ToSlash(name))
	}
	return nil
}
