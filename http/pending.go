package httpapi

// Pending reports what a shutdown waits for: the runs holding a slot and
// the event streams open.
func (s *Server) Pending() (runs, streams int) {
	s.runs.mu.Lock()
	runs = s.runs.inflight
	s.runs.mu.Unlock()
	s.streamSlots.mu.Lock()
	streams = s.streamSlots.total
	s.streamSlots.mu.Unlock()
	return runs, streams
}
