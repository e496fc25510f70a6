package runstatus

import "errors"

// ErrNoRun is returned by a request to stop the run in progress when no run
// is in progress (the stop event, button or command with nothing to stop).
var ErrNoRun = errors.New("no grocery run is in progress; nothing to stop")
