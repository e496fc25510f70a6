package gemini

import "time"

// FastClock is a clock that runs Speed times faster than the wall clock, for
// tests of per-minute quotas that should not take minutes. Give the same
// clock to the server (Config.Now = c.Now) and to the client's limiter
// (agent.NewQuota(…, c)), so both see the same time.
type FastClock struct {
	start time.Time
	speed float64
}

// NewFastClock returns a clock that starts now and runs speed times faster.
func NewFastClock(speed float64) *FastClock {
	if speed <= 0 {
		speed = 1
	}
	return &FastClock{start: time.Now(), speed: speed}
}

// Now is the clock's time: monotonic, as it derives from time.Since.
func (c *FastClock) Now() time.Time {
	return c.start.Add(time.Duration(float64(time.Since(c.start)) * c.speed))
}

// After fires after d of the clock's time.
func (c *FastClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	time.AfterFunc(time.Duration(float64(d)/c.speed), func() { ch <- c.Now() })
	return ch
}
