// Package atomicfile replaces files so that readers and crashes see either
// the old content or the new one, never a mix: the shopping list, its
// summary, the run journal and the product memory are all written
// this way.
package atomicfile

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces path with data: a temporary file in the same directory,
// fsync, rename over path, fsync of the directory. The temporary file is
// removed when anything fails. path must not be a symlink the caller wants
// kept (resolve it first).
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteChecked(path, data, perm, nil)
}

// WriteChecked is Write that calls check, when not nil, right before the
// rename (the new content is on disk by then): an error from check leaves
// path untouched and is returned as is. Writers that share a file with
// programs taking no lock use it to make sure path still holds what they
// read.
func WriteChecked(path string, data []byte, perm fs.FileMode, check func() error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: create temporary file: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: chmod: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", path, err)
	}
	if check != nil {
		if err = check(); err != nil {
			return err
		}
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: rename: %w", path, err)
	}
	// Make the rename durable. Best effort: the new content is in place
	// already, and some filesystems cannot fsync a directory.
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
