package runstatus

import "sync"

// Bus fans events out to subscribers. Publish never blocks: each subscriber
// has a buffered channel and a subscriber that falls behind loses the oldest
// undelivered events rather than stalling the run (the count is kept).
//
// The zero value is ready to use.
type Bus struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

// Subscription receives events on C until Close is called or the Bus closes.
type Subscription struct {
	C       <-chan Event
	c       chan Event
	bus     *Bus
	mu      sync.Mutex
	dropped int
}

// Dropped is how many events this subscriber lost because it fell behind.
func (s *Subscription) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Subscribe returns a subscription with room for buffer events (min 16).
func (b *Bus) Subscribe(buffer int) *Subscription {
	if buffer < 16 {
		buffer = 16
	}
	c := make(chan Event, buffer)
	s := &Subscription{C: c, c: c, bus: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		close(c)
		return s
	}
	if b.subs == nil {
		b.subs = make(map[*Subscription]struct{})
	}
	b.subs[s] = struct{}{}
	return s
}

// Close stops delivery to s and closes s.C. Safe to call more than once.
func (s *Subscription) Close() {
	b := s.bus
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.subs[s]; ok {
		delete(b.subs, s)
		close(s.c)
	}
}

// Publish delivers e to every subscriber without blocking.
func (b *Bus) Publish(e Event) {
	e = e.Bounded()
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		for {
			select {
			case s.c <- e:
			default:
				// Full: drop the oldest event and try again.
				select {
				case <-s.c:
					s.mu.Lock()
					s.dropped++
					s.mu.Unlock()
				default:
				}
				continue
			}
			break
		}
	}
}

// Close closes every subscription; later Subscribe calls get a closed channel.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		delete(b.subs, s)
		close(s.c)
	}
}
