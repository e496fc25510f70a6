//go:build !unix

package serve

import (
	"errors"
	"os"
)

// PollableFile is f on systems where descriptors cannot be made pollable.
type PollableFile struct {
	*os.File
}

// Pollable is not supported here: reads from f cannot be interrupted.
func Pollable(f *os.File) (*PollableFile, error) {
	return nil, errors.New("pollable stdin is not supported on this system")
}
