package ask

import "time"

// SetExpiry replaces how a question's timeout starts, so a test can end it
// when the world is ready instead of racing a short real timer.
func (a *Asker) SetExpiry(f func(time.Duration) <-chan time.Time) { a.expiry = f }
