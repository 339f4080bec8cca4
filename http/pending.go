package httpapi

// Pending reports what a shutdown waits for: the runs holding a slot and
// the event streams open.
func (s *Server) Pending() (runs, streams int) {
	s.runs.mu.Lock()
	runs = s.runs.inflight
	s.runs.mu.Unlock()
	for _, n := range s.streamSlots.pool.Stats().Held {
		streams += n
	}
	return runs, streams
}
